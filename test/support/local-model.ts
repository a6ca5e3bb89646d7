/** The local model tests start: llama-server with SmolLM2 (scripts/local-model.ts, which benches use too). */
export { LLAMA_SERVER, LOCAL_MODEL, SMOLLM2_GGUF, startLocalModel, type LocalModel } from '../../scripts/local-model';
