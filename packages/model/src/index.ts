/**
 * `@lethe/model`: a readable Llama/Qwen2-style decoder in tfjs with parallel prefill, cached
 * decode and policy hooks; safetensors / HF-config I/O (one file or shards); model directories
 * read from any source (`readModelFiles` over a server's URL or a browser's picked files); a
 * character tokenizer, Hugging Face tokenizers and chat templates; an SFT trainer; and the
 * generation runtime (`generate`, `GenerationSession`). Browser-safe: Node file I/O (reading and
 * writing model directories on disk) is in `@lethe/model/node`.
 *
 * @packageDocumentation
 */
export * from './decoder/index';
export * from './directory/index';
export * from './io/index';
export * from './runtime/index';
export * from './tokenizer/index';
export * from './train/index';
