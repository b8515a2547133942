// Package baseline implements the autoscalers inferscale is compared with in
// the simulator: the Kubernetes HPA (every replica-calculator branch, the
// legacy and behavior normalisation paths), KEDA (activation, cooldown, cron
// floors on top of the HPA), Knative KPA, AIBrix APA, the llm-d WVA
// saturation analyzer, the rules of seed articles 000 and 004, and static
// provisioning. Each one keeps the in-memory state its real controller
// keeps between ticks and plugs into the simulator through scaler.Autoscaler.
//
// Presets returns the named configurations the simulator and the tuning
// command run; Tunables lists each preset's searchable parameters.
package baseline
