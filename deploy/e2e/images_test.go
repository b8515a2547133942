//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/parser"
)

// image is what the emulated kubelet needs of a container image: its files (path in the image -> local file),
// and its entrypoint, cmd, working directory, user and env.
type image struct {
	ref        string
	files      map[string]string
	entrypoint []string
	cmd        []string
	workdir    string
	user       string // "uid[:gid]" or a name the base image's passwd resolves
	env        []string
	// ownNetwork: the kubelet runs the pod in a network namespace of its own and owns its lifecycle (readiness,
	// preStop, grace); set for the images whose server listens on every address (the vLLM emulator).
	ownNetwork bool
}

// baseImage is the part of a FROM image a Dockerfile builds on. Only the bases our images use are known.
type baseImage struct {
	files   map[string]string
	cmd     []string
	workdir string
	users   map[string]string // name -> uid (the base's /etc/passwd)
}

// copySource resolves a COPY source: from is the --from stage ("" for the build context).
type copySource func(from, src string) (map[string]string, error)

var argRef = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)

// imageFromDockerfile builds the image of stage target (the last stage when empty) of a Dockerfile: the base's
// files and settings, then the stage's COPY, WORKDIR, USER, ENV, ENTRYPOINT and CMD in order. RUN lines are not
// run (ours only add a passwd entry; the numeric USER needs none).
func imageFromDockerfile(ref, dockerfile, target string, bases map[string]baseImage, resolve copySource) (*image, error) {
	f, err := os.Open(dockerfile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	res, err := parser.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dockerfile, err)
	}
	args := map[string]string{}
	type stage struct {
		name, base string
		instrs     []*parser.Node
	}
	var stages []*stage
	for _, n := range res.AST.Children {
		switch kw := strings.ToLower(n.Value); {
		case kw == "arg" && len(stages) == 0:
			k, v, _ := strings.Cut(n.Next.Value, "=")
			args[k] = v
		case kw == "from":
			s := &stage{base: argRef.ReplaceAllStringFunc(n.Next.Value, func(m string) string { return args[argRef.FindStringSubmatch(m)[1]] })}
			if as := n.Next.Next; as != nil && strings.EqualFold(as.Value, "as") && as.Next != nil {
				s.name = as.Next.Value
			}
			stages = append(stages, s)
		case len(stages) > 0:
			stages[len(stages)-1].instrs = append(stages[len(stages)-1].instrs, n)
		}
	}
	var st *stage
	for _, s := range stages {
		if s.name == target || (target == "" && s == stages[len(stages)-1]) {
			st = s
		}
	}
	if st == nil {
		return nil, fmt.Errorf("%s: no stage %q", dockerfile, target)
	}
	base, ok := bases[st.base]
	if !ok {
		return nil, fmt.Errorf("%s: stage %q is FROM %s, which the test does not know", dockerfile, target, st.base)
	}
	img := &image{ref: ref, files: map[string]string{}, cmd: base.cmd, workdir: orDefault(base.workdir, "/")}
	for p, local := range base.files {
		img.files[p] = local
	}
	for _, n := range st.instrs {
		var a []string
		for x := n.Next; x != nil; x = x.Next {
			a = append(a, x.Value)
		}
		switch strings.ToLower(n.Value) {
		case "copy":
			from := ""
			for _, fl := range n.Flags {
				if v, ok := strings.CutPrefix(fl, "--from="); ok {
					from = v
				}
			}
			srcs, dest := a[:len(a)-1], a[len(a)-1]
			dest = inDir(img.workdir, dest)
			for _, src := range srcs {
				got, err := resolve(from, src)
				if err != nil {
					return nil, fmt.Errorf("%s line %d: %w", dockerfile, n.StartLine, err)
				}
				for rel, local := range got {
					target := dest
					if strings.HasSuffix(a[len(a)-1], "/") || a[len(a)-1] == "." || len(got) > 1 || len(srcs) > 1 {
						target = path.Join(dest, rel)
					}
					img.files[target] = local
				}
			}
		case "workdir":
			img.workdir = inDir(img.workdir, a[0])
		case "user":
			img.user = a[0]
		case "env":
			for i := 0; i+1 < len(a); i += 2 {
				img.env = append(img.env, a[i]+"="+a[i+1])
			}
		case "entrypoint":
			img.entrypoint, img.cmd = a, nil // a new ENTRYPOINT resets the base's CMD
		case "cmd":
			img.cmd = a
		}
	}
	if name, _, _ := strings.Cut(img.user, ":"); name != "" {
		if uid, ok := base.users[name]; ok {
			img.user = uid + ":" + uid
		}
	}
	return img, nil
}

// inferscaleImage is the Dockerfile's default target (alpine) of this repository: bin/metric and bin/evaluate
// stand for the build stage's /out/ outputs (make build compiles them the same way: static, pure Go), the
// toolchain's CPA binary for the base image's /app/custom-pod-autoscaler.
func inferscaleImage(repo, toolchain string) (*image, error) {
	const cpaBase = "custompodautoscaler/alpine:v2.12.2"
	bases := map[string]baseImage{cpaBase: {
		// The CPA image: FROM alpine, WORKDIR /app, the framework binary, CMD ["/app/custom-pod-autoscaler"].
		files:   map[string]string{"/app/custom-pod-autoscaler": filepath.Join(toolchain, "custom-pod-autoscaler")},
		cmd:     []string{"/app/custom-pod-autoscaler"},
		workdir: "/app",
	}}
	resolve := func(from, src string) (map[string]string, error) {
		switch {
		case from == "":
			local := filepath.Join(repo, src)
			if _, err := os.Stat(local); err != nil {
				return nil, err
			}
			return map[string]string{path.Base(src): local}, nil
		case from == "build" && strings.HasPrefix(src, "/out/"):
			local := filepath.Join(repo, "bin", path.Base(src))
			if _, err := os.Stat(local); err != nil {
				return nil, fmt.Errorf("%s (run make build): %w", local, err)
			}
			return map[string]string{path.Base(src): local}, nil
		}
		return nil, fmt.Errorf("COPY --from=%s %s: the test knows no such stage output", from, src)
	}
	return imageFromDockerfile("inferscale", filepath.Join(repo, "Dockerfile"), "alpine", bases, resolve)
}

// operatorImage is custompodautoscaler/operator from the operator's own Dockerfile (FROM distroless/static:nonroot,
// COPY dist/ ., USER nonroot, ENTRYPOINT ["/operator"]): its Makefile puts the binary and LICENSE into dist/.
func operatorImage(src, toolchain string) (*image, error) {
	bases := map[string]baseImage{"gcr.io/distroless/static:nonroot": {users: map[string]string{"nonroot": "65532"}}}
	resolve := func(from, s string) (map[string]string, error) {
		if from != "" || strings.TrimSuffix(s, "/") != "dist" {
			return nil, fmt.Errorf("COPY --from=%q %s: the operator's Dockerfile copies only dist/", from, s)
		}
		return map[string]string{
			"operator": filepath.Join(toolchain, "custom-pod-autoscaler-operator"),
			"LICENSE":  filepath.Join(src, "LICENSE"),
		}, nil
	}
	return imageFromDockerfile("custompodautoscaler/operator", filepath.Join(src, "Dockerfile"), "", bases, resolve)
}

// emulatorImage is the vLLM emulator's image as the closed-loop scenarios' Deployment names it: the tag its
// Makefile gives a local build (SIM_TAG dev), since the binary is built from the source in ../shared/third_party.
const emulatorImage = "ghcr.io/llm-d/llm-d-inference-sim:dev"

// simImage is ghcr.io/llm-d/llm-d-inference-sim from the emulator's own Dockerfile (a Go build stage, then FROM
// distroless/static:nonroot, COPY --from=builder /workspace/bin/llm-d-inference-sim /app/, USER 65532:65532,
// ENTRYPOINT ["/app/llm-d-inference-sim"]): the toolchain's build stands for the builder stage's output.
func simImage(src, toolchain string) (*image, error) {
	bases := map[string]baseImage{"gcr.io/distroless/static:nonroot": {users: map[string]string{"nonroot": "65532"}}}
	resolve := func(from, s string) (map[string]string, error) {
		if from != "builder" || s != "/workspace/bin/llm-d-inference-sim" {
			return nil, fmt.Errorf("COPY --from=%q %s: the emulator's Dockerfile copies only the builder's binary", from, s)
		}
		return map[string]string{"llm-d-inference-sim": filepath.Join(toolchain, "llm-d-inference-sim")}, nil
	}
	img, err := imageFromDockerfile(repository(emulatorImage), filepath.Join(src, "Dockerfile"), "", bases, resolve)
	if err != nil {
		return nil, err
	}
	img.ownNetwork = true
	return img, nil
}

// inDir resolves p against dir as a Dockerfile does: an absolute p stands, a relative one is under dir.
func inDir(dir, p string) string {
	if path.IsAbs(p) {
		return path.Clean(p)
	}
	return path.Join(dir, p)
}

// repository is an image reference without its tag or digest.
func repository(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return ref
}

// populate lays the image's files out under root: hard links where the file system allows, copies otherwise.
func (img *image) populate(root string) error {
	for p, local := range img.files {
		dst := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.Link(local, dst); err == nil {
			continue
		}
		if err := copyFile(local, dst); err != nil {
			return fmt.Errorf("image %s %s: %w", img.ref, p, err)
		}
	}
	return os.MkdirAll(filepath.Join(root, img.workdir), 0o755)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func (img *image) String() string {
	b, _ := json.Marshal(map[string]any{"ref": img.ref, "entrypoint": img.entrypoint, "cmd": img.cmd, "workdir": img.workdir, "user": img.user, "files": img.files})
	return string(b)
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
