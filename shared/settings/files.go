package settings

// Keys that name where the other knobs come from.
const (
	KeyPolicyFile = "policyFile"
	KeyConfigPath = "configPath"
)

// Files says where knobs are read from besides the environment; both
// stages read it.
type Files struct {
	// PolicyFile is read from the environment only.
	PolicyFile string `setting:"policyFile" doc:"YAML file of further knobs (env vars win over it); an unknown key in it is an error"`
	ConfigPath string `setting:"configPath" default:"/config.yaml" doc:"CPA's config.yaml, read for minReplicas and maxReplicas as CPA resolves them; a missing file is no error"`
}
