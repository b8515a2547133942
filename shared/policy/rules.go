package policy

// Rule names.
const (
	RuleQueue   = "queue"
	RuleBatch   = "batch"
	RuleKV      = "kv"
	RuleLatency = "latency"
	RuleITL     = "itl"
	RuleDemand  = "demand"
	RuleGPU     = "gpu"
)

// Rule is one signal's evaluation.
type Rule struct {
	Name string `json:"name"`
	// Value is the reading; nil when the signal is not available.
	Value     *float64 `json:"value,omitempty"`
	Threshold float64  `json:"threshold"`
	// Over is true when Value is above Threshold (outside the tolerance band).
	Over bool `json:"over"`
	// Proposal is the replica count this rule alone asks for (0: none).
	Proposal int `json:"proposal,omitempty"`
	// Low is true when the reading is under its low-water mark (or absent
	// for an optional signal).
	Low  bool   `json:"low"`
	Note string `json:"note,omitempty"`

	// alerts are what the rule saw that needs a person, not a scale.
	alerts []Warning
}

// A rule is one signal: its evaluator reads the fleet and the config and
// returns the reading, threshold and proposal. A corroborating rule never
// moves replicas by itself: corroborate says what its being over means,
// given how many primary rules are over.
type rule struct {
	eval        func(Input, Config) Rule
	corroborate func(r Rule, c Config, primaries int) string
}

// rules lists every rule in the order decisions report them, with plan,
// the policy's rule that sizes for the demand (v1: demand; v2: sizing).
// A new rule is a new file with its evaluator and one line here.
func rules(plan rule) []rule {
	return []rule{
		{eval: queue},
		{eval: batch},
		{eval: kv},
		{eval: latency},
		plan,
		{eval: gpu, corroborate: gpuCorroborates},
		{eval: itl},
	}
}

// evaluate runs every rule of rs.
func evaluate(in Input, c Config, rs []rule) []Rule {
	out := make([]Rule, len(rs))
	for i, r := range rs {
		out[i] = r.eval(in, c)
	}
	return out
}
