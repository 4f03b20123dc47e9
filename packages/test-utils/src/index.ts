export { expectClose } from './close';
export { expectLetheError, expectLetheRejection, type ThrownLetheError } from './lethe-error';
export { type LoadedModules, type LoadFormat, modulesLoadedBy } from './loaded-modules';
export { runAsyncReadmeExample, runReadmeExample } from './readme-example';
