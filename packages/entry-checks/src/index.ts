export { ALLOWED_IMPORTERS, type AllowedImporter } from './allow-list';
export { bareBuiltin, isNodeBuiltin } from './builtins';
export {
  type BuiltinImport,
  type ChainLink,
  type CheckEntryOptions,
  checkEntry,
  type EntryCheck,
  formatEntryCheck,
} from './check-entry';
export { type PublicPackage, publicPackages, readManifest } from './workspace';
