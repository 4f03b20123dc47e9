export { ANSWER_PREFIX, type FinalAnswer, finalAnswer, formatAnswer, STOP_TEXT } from './answer';
export {
  ARITHMETIC_DEFAULTS,
  type ArithmeticData,
  type ArithmeticOptions,
  type ArithmeticOptionsInput,
  type ArithmeticStep,
  arithmeticTask,
  verifyArithmetic,
} from './arithmetic';
export {
  COUNTDOWN_DEFAULTS,
  COUNTDOWN_MAX_ATTEMPTS,
  type CountdownData,
  type CountdownOptions,
  type CountdownOptionsInput,
  countdownPrompt,
  countdownTask,
  VERBOSE_COUNTDOWN,
  verifyCountdown,
} from './countdown';
export {
  type CountdownCheck,
  type CountdownOp,
  checkCountdownExpression,
  MAX_EXPRESSION_CHARS,
  MAX_EXPRESSION_DEPTH,
} from './countdown-expression';
export {
  COUNTDOWN_GOALS,
  COUNTDOWN_SEARCH_ORDERS,
  type CountdownGoal,
  type CountdownSearchOrder,
  type CountdownSolution,
  type CountdownSolverOptions,
  solveCountdown,
} from './countdown-solver';
export {
  FREQUENT_WORD_SYLLABLES,
  FREQUENT_WORDS_MIN_GAP,
  type FrequentWordsInstance,
  type FrequentWordsSpec,
  frequentWordCounts,
  frequentWordsInstance,
  frequentWordsTotal,
  topGap,
  zipfCounts,
} from './frequent-words';
export {
  FILLER_SENTENCES,
  fillerUnits,
  fillerWithItems,
  type Haystack,
  placeNeedle,
  scatterInOrder,
} from './haystack';
export {
  LANGUAGE_MODEL_DEFAULTS,
  type LanguageModelOptions,
  type LanguageModelOptionsInput,
  languageModelTask,
} from './language-model';
export {
  MQAR_KEY_SYLLABLES,
  type MqarInstance,
  type MqarSpec,
  mqarContextLength,
  mqarInstance,
} from './mqar';
export {
  type MultiValueInstance,
  type MultiValueSpec,
  multiValueInstance,
  multiValueMinChars,
  multiValueNeedleCount,
} from './multi-value';
export {
  kvNeedleCount,
  NEEDLE_KEY_SYLLABLES,
  type NiahInstance,
  type NiahSpec,
  needleLength,
  needleSentence,
  niahInstance,
} from './niah';
export { type RecitationForm, type RecitationOrder, recitationChainCount } from './recitation';
export {
  createTask,
  isTaskName,
  TASK_NAMES,
  type TaskByName,
  type TaskName,
  type TaskOptionsByName,
} from './registry';
export {
  type CopyOptions,
  type FrequentWordsOptions,
  MAX_RETRIEVAL_KEYS,
  type MqarOptions,
  type NiahMultiOptions,
  type NiahMultiValueOptions,
  type NiahSingleOptions,
  RETRIEVAL_VARIANTS,
  type RecitationOptions,
  type RetrievalData,
  type RetrievalOptions,
  type RetrievalOptionsInput,
  type RetrievalVariant,
  retrievalTask,
  type TwoHopOptions,
  type VariableTrackingOptions,
  verifyRetrieval,
} from './retrieval';
export { SeededRandom } from './seeded';
export { STORY_CAST, storyDocument } from './story-grammar';
export {
  SUITE_COUNTDOWN_MAX_TRACE_CHARS,
  SUITE_COUNTDOWN_MAX_VALUE,
  SUITE_MAX_CONTEXT_CHARS,
  SUITE_MEMBERS,
  SUITE_MIN_CONTEXT_CHARS,
  SUITE_MIN_WARMUP_CONTEXT_CHARS,
  SUITE_RETRIEVAL_MEMBERS,
  SUITE_SOLO_WARMUP_MEMBERS,
  SUITE_WARMUP_MEMBERS,
  type SuiteData,
  type SuiteMember,
  type SuiteOptions,
  type SuiteOptionsInput,
  type SuiteSelection,
  type SuiteWarmupMember,
  suiteTask,
} from './suite';
export { suiteBpeTokenizer } from './suite-tokenizer';
export type { GenerationTask, PerplexityTask, Task, TaskExample, Verdict } from './task';
export { checkTaskTokenizer } from './task-tokenizer-check';
export { TASK_ALPHABETS, type TaskFamily, taskTokenizer } from './tokenizers';
export {
  LINK_FORMS,
  type LinkForm,
  linkSentence,
  type TwoHopInstance,
  type TwoHopRoute,
  type TwoHopSpec,
  twoHopInstance,
  twoHopMinChars,
  viaLine,
} from './two-hop';
export {
  assignmentStatement,
  VARIABLE_NAME_SYLLABLES,
  type VariableHaystack,
  type VariableQuery,
  type VariableTrackingInstance,
  type VariableTrackingSpec,
  variableRoute,
  variableTrackingInstance,
  variableTrackingMinChars,
} from './variable-tracking';
export {
  digitValueCount,
  distinctPseudoWords,
  distinctRandomDigits,
  pseudoWord,
  randomDigits,
  SYLLABLE_COUNT,
} from './words';
