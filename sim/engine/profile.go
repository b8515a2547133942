package engine

import "github.com/inferscale/inferscale/shared/model"

// TypicalPrompt is the prompt length Profile averages the attention cost
// over by default: the mean of the conversation traffic the synthetic and
// ServeGen workloads draw (workload.AzureConversationInput, 1,155 tokens).
const TypicalPrompt = 1155

// Profile is the service model's iteration-time prior (the policy's
// `profile` setting) that describes m, for prompts of promptTokens
// tokens:
//
//	α   = IterBase
//	β   = PerPrefillToken + PerAttnPair·promptTokens/2
//	γs  = PerDecodeSeq
//	γkv = PerKVToken × KVCapacity
//
// The model's β is linear in prompt tokens while the engine's causal
// attention costs PerAttnPair·n²/2 for a prompt of n tokens, i.e.
// PerAttnPair·n/2 per token: Profile folds that in at promptTokens. For a
// mix of lengths the exact per-token average is PerAttnPair·E[n²]/(2·E[n]);
// pass that E[n²]/E[n] to match a long-tailed mix. γkv is per full KV
// cache because the model's KV regressor is the usage share (0-1).
func (m Model) Profile(promptTokens int) model.Params {
	return model.Params{
		Alpha:    m.IterBase,
		Beta:     m.PerPrefillToken + m.PerAttnPair*float64(promptTokens)/2,
		GammaSeq: m.PerDecodeSeq,
		GammaKV:  m.PerKVToken * float64(m.KVCapacity),
	}
}
