//go:build e2e

package e2e

import (
	"fmt"
	"os/exec"
	"strconv"
)

// A pod whose image listens on every address of its network namespace (the vLLM emulator binds ":8000", as vLLM
// does) gets a network namespace of its own, as on a node: the kubelet starts its container in a new one
// (CLONE_NEWNET) and wires it to the test's namespace with a veth pair, the pod IP on the pod's end (eth0). In the
// test's namespace a /32 route in the local table sends the pod IP to the host end, ahead of the local route that
// makes the rest of the pod network local addresses (the pods that share the test's namespace). Every host end
// carries podGatewayIP, which the pod uses as its default gateway and the test's connections to pods come from.
const podGatewayIP = "169.254.1.1"

// attachPodNetwork wires the network namespace of process pid to the test's: veth host (here) and eth0 (there),
// ip on eth0, lo up, a default route via podGatewayIP. The host end and its route go with the namespace when its
// last process exits.
func attachPodNetwork(pid int, host, ip string) error {
	ns := "--net=/proc/" + strconv.Itoa(pid) + "/ns/net"
	for _, argv := range [][]string{
		{"ip", "link", "add", host, "type", "veth", "peer", "name", "eth0", "netns", strconv.Itoa(pid)},
		{"ip", "addr", "add", podGatewayIP + "/32", "dev", host},
		{"ip", "link", "set", host, "up"},
		{"ip", "route", "add", ip + "/32", "dev", host, "table", "local", "src", podGatewayIP},
		{"nsenter", ns, "ip", "link", "set", "lo", "up"},
		{"nsenter", ns, "ip", "addr", "add", ip + "/32", "dev", "eth0"},
		{"nsenter", ns, "ip", "link", "set", "eth0", "up"},
		{"nsenter", ns, "ip", "route", "add", podGatewayIP, "dev", "eth0", "scope", "link"},
		{"nsenter", ns, "ip", "route", "add", "default", "via", podGatewayIP, "dev", "eth0"},
	} {
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("pod network %s (%s): %v: %w: %s", ip, host, argv, err, out)
		}
	}
	return nil
}
