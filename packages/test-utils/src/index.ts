export { expectClose } from './close';
export { expectLetheError, expectLetheRejection, type ThrownLetheError } from './lethe-error';
