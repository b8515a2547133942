package workload

import (
	"math"
	"math/rand/v2"
)

// TokenLaw is a log-normal token-length distribution, given by the median
// and mean that papers publish for real traces, truncated to [Min, Max].
// A log-normal with median m and mean μ has sigma² = 2·ln(μ/m).
type TokenLaw struct {
	Median, Mean float64
	Min, Max     int
}

// Published token-length statistics used where a trace carries no lengths.
var (
	// AzureConversationInput and AzureConversationOutput follow the Azure
	// LLM inference trace 2023, conversation service: median prompt 1,020
	// and median output 129 tokens (Patel et al., "Splitwise", ISCA 2024,
	// §III), means ≈1,155 and ≈211 tokens as reported for
	// AzureLLMInferenceTrace_conv.csv. Used for ServeGen (which has no
	// lengths in its rate CSVs) and by the synthetic generator.
	AzureConversationInput  = TokenLaw{Median: 1020, Mean: 1155, Min: 1, Max: 32768}
	AzureConversationOutput = TokenLaw{Median: 129, Mean: 211, Min: 1, Max: 8192}
	// AzureCodeInput and AzureCodeOutput are measured on
	// ../shared/traces/azure_llm_2023/AzureLLMInferenceTrace_code.csv
	// (8,819 requests): input median 1,469, mean 2,048; output median 13,
	// mean 27.9 (Splitwise reports medians 1,500 and 13).
	AzureCodeInput  = TokenLaw{Median: 1469, Mean: 2048, Min: 1, Max: 32768}
	AzureCodeOutput = TokenLaw{Median: 13, Mean: 27.9, Min: 1, Max: 8192}
)

// sampler draws from a TokenLaw. mu and sigma are the log-space parameters.
type sampler struct {
	mu, sigma float64
	min, max  int
}

func (l TokenLaw) sampler() sampler {
	med := l.Median
	if med < 1 {
		med = 1
	}
	mean := l.Mean
	if mean < med {
		mean = med
	}
	min, max := l.Min, l.Max
	if min < 1 {
		min = 1
	}
	if max < min {
		max = min
	}
	return sampler{mu: math.Log(med), sigma: math.Sqrt(2 * math.Log(mean/med)), min: min, max: max}
}

func (s sampler) draw(rng *rand.Rand) int {
	v := math.Exp(s.mu + s.sigma*rng.NormFloat64())
	n := int(math.Round(v))
	if n < s.min {
		return s.min
	}
	if n > s.max {
		return s.max
	}
	return n
}

// gammaRand draws Gamma(shape, 1) with the Marsaglia–Tsang method
// ("A simple method for generating gamma variables", ACM TOMS 26(3), 2000),
// boosting shapes below 1 with U^(1/shape). shape must be > 0.
func gammaRand(rng *rand.Rand, shape float64) float64 {
	if shape < 1 {
		u := rng.Float64()
		for u == 0 {
			u = rng.Float64()
		}
		return gammaRand(rng, shape+1) * math.Exp(math.Log(u)/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x {
			return d * v
		}
		if u > 0 && math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// newRand returns a deterministic generator for a seed and a stream id, so
// independent streams (clients, token lengths) do not share draws.
func newRand(seed int64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), stream*0x9e3779b97f4a7c15+1))
}
