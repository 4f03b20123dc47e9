#!/usr/bin/env node
// `npm run demo`: installs the workspace, builds the packages and runs the main job
// (examples/main-job). The build shows turbo's output of each package it builds (a line per
// package when cached).
import { runSteps, SET_UP } from './workspace-steps.mjs';

runSteps(
  'demo',
  [
    ...SET_UP,
    {
      what: 'running the main job, examples/main-job/sweep.json (its cells on two threads: about 3½ min on a slow 2-core machine; finished cells are not recomputed: delete examples/main-job/out to start afresh)',
      args: ['--filter', '@lethe/example-main-job', 'start'],
    },
  ],
  'report in examples/main-job/out/report/',
);
