export { expectClose } from './close';
export { runDocExample } from './doc-example';
export { expectLetheError, expectLetheRejection, type ThrownLetheError } from './lethe-error';
export { type LoadedModules, type LoadFormat, modulesLoadedBy } from './loaded-modules';
export { runAsyncReadmeExample, runReadmeExample } from './readme-example';
export { shellWords } from './shell-words';
