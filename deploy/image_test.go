package deploy

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/parser"

	"github.com/inferscale/inferscale/deploy/cpaconfig"
	"github.com/inferscale/inferscale/shared/cpa"
)

// stage is one FROM block of the Dockerfile.
type stage struct {
	name   string
	base   string // image after ARG substitution, or another stage's name
	instrs []*parser.Node
}

// dockerfile is the parsed Dockerfile: global ARG defaults and stages in order.
type dockerfile struct {
	args   map[string]string
	stages []*stage
}

func (d *dockerfile) stage(name string) *stage {
	for _, s := range d.stages {
		if s.name == name {
			return s
		}
	}
	return nil
}

// ancestry returns s and the stages it is built FROM, nearest first.
func (d *dockerfile) ancestry(s *stage) []*stage {
	out := []*stage{s}
	for p := d.stage(s.base); p != nil; p = d.stage(p.base) {
		out = append(out, p)
	}
	return out
}

var argRef = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)

func parseDockerfile(t *testing.T, path string) *dockerfile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := parser.Parse(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	d := &dockerfile{args: map[string]string{}}
	var cur *stage
	for _, n := range res.AST.Children {
		n.Value = strings.ToLower(n.Value) // the instruction keyword, case-insensitive in Dockerfiles
		switch n.Value {
		case "arg":
			if cur == nil {
				k, v, _ := strings.Cut(n.Next.Value, "=")
				d.args[k] = v
				continue
			}
		case "from":
			base := argRef.ReplaceAllStringFunc(n.Next.Value, func(m string) string {
				return d.args[argRef.FindStringSubmatch(m)[1]]
			})
			cur = &stage{base: base}
			if as := n.Next.Next; as != nil && strings.EqualFold(as.Value, "as") && as.Next != nil {
				cur.name = as.Next.Value
			}
			d.stages = append(d.stages, cur)
			continue
		}
		if cur == nil {
			t.Fatalf("%s:%d: %s before the first FROM", path, n.StartLine, n.Value)
		}
		cur.instrs = append(cur.instrs, n)
	}
	return d
}

func args(n *parser.Node) []string {
	var out []string
	for a := n.Next; a != nil; a = a.Next {
		out = append(out, a.Value)
	}
	return out
}

func flag(n *parser.Node, name string) string {
	for _, f := range n.Flags {
		if v, ok := strings.CutPrefix(f, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

var goBuildOutput = regexp.MustCompile(`go build .*-o (\S+)`)

// buildOutputs lists the -o paths of the RUN go build lines of s and its ancestors.
func (d *dockerfile) buildOutputs(s *stage) map[string]bool {
	out := map[string]bool{}
	for _, st := range d.ancestry(s) {
		for _, n := range st.instrs {
			if n.Value == "run" {
				if m := goBuildOutput.FindStringSubmatch(n.Next.Value); m != nil {
					out[m[1]] = true
				}
			}
		}
	}
	return out
}

// runtimeFiles maps each path a runtime target puts into the image to the stage (or "context") it comes from,
// and lists every COPY whose source does not exist where it is taken from.
func (d *dockerfile) runtimeFiles(root string, s *stage) (map[string]string, []error) {
	files := map[string]string{}
	var errs []error
	for _, n := range s.instrs {
		if n.Value != "copy" && n.Value != "add" {
			continue
		}
		a := args(n)
		if len(a) < 2 {
			errs = append(errs, fmt.Errorf("line %d: %s needs a source and a destination", n.StartLine, n.Original))
			continue
		}
		srcs, dest := a[:len(a)-1], a[len(a)-1]
		from := flag(n, "from")
		for _, src := range srcs {
			switch {
			case from == "":
				if _, err := os.Stat(filepath.Join(root, src)); err != nil {
					errs = append(errs, fmt.Errorf("line %d: COPY source %s is not in the build context: %w", n.StartLine, src, err))
				}
				if dockerignored(root, src) {
					errs = append(errs, fmt.Errorf("line %d: COPY source %s is excluded by .dockerignore", n.StartLine, src))
				}
			case d.stage(from) == nil:
				errs = append(errs, fmt.Errorf("line %d: COPY --from=%s names no stage", n.StartLine, from))
			case d.stage(from).base == d.args["CPA_IMAGE"]:
				if src != "/app/custom-pod-autoscaler" {
					errs = append(errs, fmt.Errorf("line %d: only the framework binary is taken from the CPA image, not %s", n.StartLine, src))
				}
			default:
				if !d.buildOutputs(d.stage(from))[src] {
					errs = append(errs, fmt.Errorf("line %d: stage %s builds no %s", n.StartLine, from, src))
				}
			}
			target := dest
			if strings.HasSuffix(dest, "/") {
				target = dest + filepath.Base(src)
			}
			files[target] = orDefault(from, "context")
		}
	}
	return files, errs
}

// dockerignored reports whether the first path element of src is excluded by .dockerignore.
func dockerignored(root, src string) bool {
	b, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	if err != nil {
		return false
	}
	first := strings.Split(filepath.Clean(src), string(filepath.Separator))[0]
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if ok, _ := filepath.Match(line, first); ok {
			return true
		}
	}
	return false
}

// cpaConfigFiles returns config/*.yaml (the CPA configs the image carries), decoded strictly.
func cpaConfigFiles(t *testing.T) map[string]*cpaconfig.Config {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(repoRoot(t), "config", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no config/*.yaml (%v)", err)
	}
	out := map[string]*cpaconfig.Config{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		c, err := cpaconfig.ParseConfig(b)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out[filepath.Base(p)] = c
	}
	return out
}

func TestDockerfileTargetsCarryEverythingTheyReferTo(t *testing.T) {
	root := repoRoot(t)
	d := parseDockerfile(t, filepath.Join(root, "Dockerfile"))
	if got := d.args["CPA_IMAGE"]; got != "custompodautoscaler/alpine:v2.12.2" {
		t.Errorf("CPA_IMAGE defaults to %q, want custompodautoscaler/alpine:v2.12.2", got)
	}
	if last := d.stages[len(d.stages)-1]; last.name != "alpine" || last.base != d.args["CPA_IMAGE"] {
		t.Errorf("the default (last) target is %s FROM %s, want alpine FROM the CPA image", last.name, last.base)
	}
	configs := cpaConfigFiles(t)
	var configPaths []string
	for _, ov := range loadOverlays(t) {
		configPaths = append(configPaths, orDefault(ov.config["configPath"], "/config.yaml"))
	}
	for _, target := range []string{"alpine", "dcgm"} {
		t.Run(target, func(t *testing.T) {
			s := d.stage(target)
			if s == nil {
				t.Fatalf("no stage %s", target)
			}
			files, errs := d.runtimeFiles(root, s)
			for _, err := range errs {
				t.Error(err)
			}
			if s.base != d.args["CPA_IMAGE"] {
				if files["/app/custom-pod-autoscaler"] != "cpa" {
					t.Errorf("%s is not FROM the CPA image and does not copy /app/custom-pod-autoscaler from it", target)
				}
			}
			for name, c := range configs {
				if files["/"+name] != "context" {
					t.Errorf("image lacks /%s (from config/%s)", name, name)
				}
				for method, m := range c.Methods() {
					if m.Shell == nil {
						continue
					}
					if _, ok := files[m.Shell.Entrypoint]; !ok {
						t.Errorf("config/%s %s entrypoint %s is not in the image", name, method, m.Shell.Entrypoint)
					}
				}
			}
			for _, p := range configPaths {
				if _, ok := files[p]; !ok {
					t.Errorf("an overlay selects configPath %s, which is not in the image", p)
				}
			}
			// Every container of the CPA pod runs the image (the exporter sidecar too): its command is in it.
			for _, ov := range loadOverlays(t) {
				for _, c := range ov.cpa.Spec.Template.Spec.Containers {
					if len(c.Command) > 0 {
						if _, ok := files[c.Command[0]]; !ok {
							t.Errorf("overlay %s: container %s runs %s, which is not in the image", ov.name, c.Name, c.Command[0])
						}
					}
				}
			}
			user, cmd := "", ""
			for _, n := range s.instrs {
				switch n.Value {
				case "user":
					user = n.Next.Value
				case "cmd":
					cmd = strings.Join(args(n), " ")
				}
			}
			uid, _, _ := strings.Cut(user, ":")
			if n, err := strconv.Atoi(uid); err != nil || n == 0 {
				t.Errorf("USER %q: want a numeric non-root uid (runAsNonRoot can only verify numeric ones)", user)
			}
			if cmd != "/app/custom-pod-autoscaler" {
				t.Errorf("CMD %q, want the exec form [\"/app/custom-pod-autoscaler\"]", cmd)
			}
		})
	}
}

// buildStageCommands returns the RUN lines with "go build" of the Dockerfile's build stages, in order.
func buildStageCommands(t *testing.T, d *dockerfile) []string {
	var out []string
	for _, s := range d.stages {
		for _, n := range s.instrs {
			if n.Value == "run" && strings.Contains(n.Next.Value, "go build") {
				out = append(out, n.Next.Value)
			}
		}
	}
	if len(out) < 4 {
		t.Fatalf("found %d go build lines in the Dockerfile, want metric, evaluate, exporter and metric-dcgm", len(out))
	}
	return out
}

// buildAsTheDockerfileDoes runs the build stages' go build lines here (WORKDIR /src is the repository, since
// the stage does COPY . .), with /out/ redirected to a temporary folder, and returns that folder.
func buildAsTheDockerfileDoes(t *testing.T) string {
	t.Helper()
	root := repoRoot(t)
	d := parseDockerfile(t, filepath.Join(root, "Dockerfile"))
	out := t.TempDir()
	for _, line := range buildStageCommands(t, d) {
		cmdline := strings.ReplaceAll(line, "/out/", out+"/")
		cmd := exec.Command("sh", "-c", cmdline)
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("Dockerfile build line failed here: %s\n%v\n%s", line, err, b)
		}
	}
	return out
}

// elfFacts reports a binary's ELF interpreter (empty: static) and DT_NEEDED libraries.
func elfFacts(t *testing.T, path string) (interp string, needed []string) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				t.Fatal(err)
			}
			interp = string(bytes.TrimRight(b, "\x00"))
		}
	}
	needed, _ = f.ImportedLibraries()
	return interp, needed
}

// needRoot skips (or, in CI, fails) a check that needs root.
func needRoot(t *testing.T, what string) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s needs root, which CI has", what)
	}
	t.Skipf("%s needs root", what)
}

// runIn runs bin with stdin and env, optionally chrooted into dir (which then holds only the binary).
func runIn(t *testing.T, chroot, bin string, stdin string, env []string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(bin)
	if chroot != "" {
		cmd = exec.Command("/" + filepath.Base(bin))
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: chroot}
		cmd.Dir = "/"
	}
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

const (
	podInput      = `{"resource":{"metadata":{"name":"vllm-0","namespace":"inference"},"status":{"podIP":"127.0.0.1","phase":"Running"}},"runType":"api_dry_run"}`
	evaluateInput = `{"metrics":null,"resource":{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"vllm"},"spec":{"replicas":3}},"runType":"api_dry_run"}`
)

func TestDockerfileBuildStageBuildsBinariesThatStartOnTheirLibc(t *testing.T) {
	out := buildAsTheDockerfileDoes(t)
	// The pure-Go binaries of the Alpine target are static: no interpreter, no shared library.
	for _, name := range []string{"metric", "evaluate", "exporter"} {
		interp, needed := elfFacts(t, filepath.Join(out, name))
		if interp != "" || len(needed) != 0 {
			t.Errorf("%s is dynamic (interpreter %q, needs %v); the Alpine image needs CGO_ENABLED=0 static binaries", name, interp, needed)
		}
	}
	// The DCGM build is dynamic against glibc (dlopen of libdcgm needs a dynamic binary) and needs nothing else.
	interp, needed := elfFacts(t, filepath.Join(out, "metric-dcgm"))
	if !strings.Contains(interp, "ld-linux") || !slices.Equal(needed, []string{"libc.so.6"}) {
		t.Errorf("metric-dcgm: interpreter %q, needs %v; want glibc's ld-linux and only libc.so.6", interp, needed)
	}

	t.Run("static binaries start with no libc at all", func(t *testing.T) {
		needRoot(t, "chroot into an empty folder")
		jail := t.TempDir()
		for _, name := range []string{"metric", "evaluate"} {
			b, err := os.ReadFile(filepath.Join(out, name))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(jail, name), b, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		stdout, stderr, err := runIn(t, jail, filepath.Join(jail, "evaluate"), evaluateInput, []string{"stateBackend=none", "configPath=/absent.yaml"})
		var ev cpa.EvaluateOutput
		if err != nil || json.Unmarshal([]byte(stdout), &ev) != nil || ev.TargetReplicas < 1 {
			t.Errorf("evaluate in an empty root: err %v, stdout %q, stderr %q", err, stdout, stderr)
		}
		stdout, stderr, err = runIn(t, jail, filepath.Join(jail, "metric"), podInput, []string{"metricsPort=1", "gpuSource=none"})
		if err != nil || !strings.Contains(stdout, `"vllm-0"`) {
			t.Errorf("metric in an empty root: err %v, stdout %q, stderr %q", err, stdout, stderr)
		}
	})

	t.Run("DCGM binary starts on glibc and reports DCGM absent", func(t *testing.T) {
		if _, err := os.Stat("/usr/lib/x86_64-linux-gnu/libdcgm.so.4"); err == nil {
			t.Skip("DCGM is installed here; the absence path cannot be shown")
		}
		bin := filepath.Join(out, "metric-dcgm")
		stdout, stderr, err := runIn(t, "", bin, podInput, []string{"metricsPort=1", "gpuSource=dcgm"})
		if err != nil || !strings.Contains(stdout, "libdcgm.so.4 not found") {
			t.Errorf("metric-dcgm with gpuSource=dcgm: err %v, stdout %q, stderr %q; want a report saying libdcgm.so.4 is absent", err, stdout, stderr)
		}
		// Its DCGM symbols are resolved lazily after dlopen: immediate binding (what musl always does) fails.
		_, stderr, err = runIn(t, "", bin, podInput, []string{"LD_BIND_NOW=1"})
		if err == nil || !strings.Contains(stderr, "undefined symbol: dcgm") {
			t.Errorf("metric-dcgm with LD_BIND_NOW=1: err %v, stderr %q; want a symbol lookup error", err, stderr)
		}
	})

	t.Run("DCGM binary cannot start on musl", func(t *testing.T) {
		if _, err := exec.LookPath("musl-gcc"); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal("musl-gcc is missing (apt-get install musl-tools; .ci/run does)")
			}
			t.Skip("musl-gcc is missing (apt-get install musl-tools)")
		}
		bin := filepath.Join(t.TempDir(), "metric-dcgm-musl")
		cmd := exec.Command("go", "build", "-tags", "dcgm", "-o", bin, "./metric")
		cmd.Dir = repoRoot(t)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1", "CC=musl-gcc")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("musl build: %v\n%s", err, b)
		}
		_, stderr, err := runIn(t, "", bin, podInput, nil)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || !strings.Contains(stderr, "symbol not found") {
			t.Errorf("musl metric-dcgm: err %v, stderr %q; want musl's relocation errors", err, firstLines(stderr, 3))
		}
	})
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

func TestDockerfileParserSeesBrokenReferences(t *testing.T) {
	root := repoRoot(t)
	dir := t.TempDir()
	bad := `ARG CPA_IMAGE=custompodautoscaler/alpine:v2.12.2
FROM golang AS build
RUN CGO_ENABLED=0 go build -o /out/metric ./metric
FROM ${CPA_IMAGE} AS alpine
COPY --from=build /out/evaluate /
COPY config/missing.yaml /config.yaml
COPY --from=nowhere /x /
USER root
`
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	d := parseDockerfile(t, filepath.Join(dir, "Dockerfile"))
	if d.stage("alpine").base != "custompodautoscaler/alpine:v2.12.2" {
		t.Fatalf("ARG substitution: base %q", d.stage("alpine").base)
	}
	files, errs := d.runtimeFiles(root, d.stage("alpine"))
	if got := fmt.Sprint(errs); len(errs) != 3 || !strings.Contains(got, "builds no /out/evaluate") ||
		!strings.Contains(got, "config/missing.yaml is not in the build context") || !strings.Contains(got, "--from=nowhere names no stage") {
		t.Fatalf("runtimeFiles errors: %v; want the missing build output, context file and stage", errs)
	}
	if files["/evaluate"] != "build" || files["/config.yaml"] != "context" {
		t.Fatalf("destinations: %v", files)
	}
	if fmt.Sprint(d.buildOutputs(d.stage("build"))) != "map[/out/metric:true]" {
		t.Fatalf("buildOutputs: %v", d.buildOutputs(d.stage("build")))
	}
}
