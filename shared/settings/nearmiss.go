package settings

import (
	"slices"
	"strings"
	"unicode"
)

// cpaKeys are the top-level keys of CPA's own config.yaml (CPA v2.12.2,
// config/config.go), which the operator and the CR's config also hand to
// the process as environment variables of the same name.
func cpaKeys() []string {
	return []string{
		"scaleTargetRef", "preMetric", "postMetric", "preEvaluate", "postEvaluate", "preScale", "postScale",
		"evaluate", "metric", "interval", "namespace", "minReplicas", "maxReplicas", "runMode", "startTime",
		"logVerbosity", "downscaleStabilization", "apiConfig", "kubernetesMetricSpecs", "requireKubernetesMetrics",
		"initialReadinessDelay", "cpuInitializationPeriod",
	}
}

// NearMiss is an environment variable that no stage reads but that looks
// like a misspelling of a key one does.
type NearMiss struct {
	Name string // the variable as set
	Key  string // the known key it is closest to
}

// NearMisses returns the names among env (os.Environ's "name=value"
// entries, or bare names) that are not a known key of either stage or of
// CPA but are a near miss of one: the same letters in another case, an
// edit distance of at most 2 (1 for keys under 6 letters), or a known key
// with something appended. Names without a lower-case letter are compared
// by case only, so the process environment's own variables (PATH,
// HOSTNAME, KUBERNETES_SERVICE_HOST) are never reported. The answer is
// sorted by name; it never changes what a stage decodes.
func NearMisses(env []string) []NearMiss {
	known := keySet()
	for _, k := range cpaKeys() {
		known[k] = true
	}
	keys := make([]string, 0, len(known))
	for k := range known {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []NearMiss
	for _, e := range env {
		name, _, _ := strings.Cut(e, "=")
		if name == "" || known[name] {
			continue
		}
		if k, ok := closestKey(name, keys); ok {
			out = append(out, NearMiss{Name: name, Key: k})
		}
	}
	slices.SortFunc(out, func(a, b NearMiss) int { return strings.Compare(a.Name, b.Name) })
	return slices.CompactFunc(out, func(a, b NearMiss) bool { return a.Name == b.Name })
}

// closestKey is the known key name is a near miss of, if any.
func closestKey(name string, keys []string) (string, bool) {
	lower := strings.ToLower(name)
	mixedCase := strings.ContainsFunc(name, unicode.IsLower)
	best, bestDist := "", 3
	for _, k := range keys {
		lk := strings.ToLower(k)
		if lower == lk {
			return k, true
		}
		if !mixedCase {
			continue
		}
		if len(k) >= 6 && strings.HasPrefix(lower, lk) {
			return k, true
		}
		limit := 2
		if len(k) < 6 {
			limit = 1
		}
		if d := editDistance(lower, lk, limit); d <= limit && d < bestDist {
			best, bestDist = k, d
		}
	}
	return best, best != ""
}

// editDistance is the Levenshtein distance of a and b, or limit+1 once it
// is known to exceed limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
