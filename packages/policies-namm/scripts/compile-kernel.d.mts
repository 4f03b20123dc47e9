/** The BAM kernel's WAT source and the module that embeds its bytes (absolute paths). */
export declare const BAM_KERNEL: { source: string; embedded: string };
/** The bytes of the BAM kernel, compiled from its WAT source. */
export declare function compileBamKernel(): Promise<Uint8Array>;
