#!/usr/bin/env node
// `npm run leaderboard`: installs the workspace, builds the packages and runs the leaderboard
// (examples/leaderboard): every registered policy on the long-context suite, resumable.
import { runSteps, SET_UP } from './workspace-steps.mjs';

runSteps(
  'leaderboard',
  [
    ...SET_UP,
    {
      what: 'running the leaderboard, examples/leaderboard/sweep.json (hours on 2 cores: stop it at any time, the same command resumes it; finished cells are not recomputed)',
      args: ['--filter', '@lethe/example-leaderboard', 'start'],
    },
  ],
  'report in examples/leaderboard/report/',
);
