/** The package's WebAssembly kernels. */
export type KernelName = 'quest' | 'attention';
/** Each kernel: its WAT source and the module that embeds its bytes, both under `src/`. */
export declare const KERNELS: Record<KernelName, { source: string; embedded: string }>;
/** The absolute path of a file under `src/`. */
export declare function sourcePath(relative: string): string;
/** The bytes of a kernel, compiled from its WAT source. */
export declare function compileKernel(name: KernelName): Promise<Uint8Array>;
