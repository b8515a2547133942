// Package e2e proves the deploy/ manifests and config/ end to end, installed the way docs/deploy.md says: a real
// control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok with fake GPU nodes) in a
// private network namespace, the real Custom Pod Autoscaler Operator v1.4.2 installed from its chart's manifests,
// the overlays applied with kubectl, and the pods the operator creates run from the pod objects by an emulated
// kubelet (the real CPA v2.12.2 running our metric and evaluate in the image's layout). Emulated vLLM servers answer
// on the pods' IPs, and a real Prometheus scrapes them for the Prometheus overlay. The closed-loop scenarios
// (closedloop_test.go) run llm-d's vLLM emulator as the vLLM pods instead, each in a network namespace of its own,
// under a load generator that measures TTFT as a client (loadgen_test.go); the prefill/decode scenario (pd_test.go)
// runs the emulator's P/D mode as both pools of deploy/overlays/pd, each scaled by its own CustomPodAutoscaler,
// under a client that makes the routing sidecar's two requests. The test is behind the e2e build tag and needs
// root; build-toolchain.sh builds the binaries and `make e2e` runs both.
//
// A scenario is a function in TestOnARealControlPlane's table (scenarios_test.go, sre_test.go) that returns its
// deployment:
//
//	d := e.deploy(t, "edge", tuning(map[string]string{"scaleDownHold": "1m"})) // overlay + config entries
//	d.fleet.set(load{Demand: busyDemand})                                      // what the vLLM pods see
//	r, at := d.expectReplicas(t, 8*tick, "busy fleet", func(r int) bool { return r > 1 })
//	d.heldBetween(t, r, at, at.Add(hold), "the plan's hold")                   // from the replica history
//
// tuning keeps policy v2 and the shipped defaults but for the few it shortens through their documented knobs
// (tickInterval, scaleDownHold, defaultStartup, metricLag), each with its reason; a scenario of a v1-only mechanism
// uses v1Tuning and says so. Waits poll with deadlines far above what they need: the machine may be loaded.
// A scenario reads the state (d.state, decoded by shared/state), the pods with their annotations
// (d.targetPodObjects, or every change of them through d.watchTargetPods), the Deployment's Events
// (d.deploymentEvents), the CPA log (d.cpaLog), CPA's REST API (d.cpaAPI), and can restart the CPA pod
// (d.restartCPA) or change the CustomPodAutoscaler (d.setConfig). Every API call the autoscaler's service account
// makes is checked against its Role afterwards, and a grant no scenario used fails the run.
package e2e
