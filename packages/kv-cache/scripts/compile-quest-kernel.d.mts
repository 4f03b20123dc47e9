/** The WAT source's path. */
export declare const KERNEL_SOURCE: string;
/** The kernel's bytes, compiled from its WAT source. */
export declare function compileQuestKernel(): Promise<Uint8Array>;
