package main

import (
	"os"
	"time"

	"github.com/inferscale/inferscale/shared/config"
	"github.com/inferscale/inferscale/shared/evaluator"
	"github.com/inferscale/inferscale/shared/kube"
	"github.com/inferscale/inferscale/shared/state"
)

// openStore adds the ConfigMap backend (in-cluster API) to the file one.
func openStore(backend string, src *config.Source) (state.Store, error) {
	if backend != "configmap" {
		return evaluator.FileStoreOpener(backend, src)
	}
	c, err := kube.InCluster(os.Getenv, "", 5*time.Second)
	if err != nil {
		return nil, err
	}
	ns := src.String("namespace", c.Namespace)
	return state.ConfigMapStore{API: c, Namespace: ns,
		Name:     src.String(evaluator.KeyStateConfigMap, evaluator.DefaultConfigMap),
		LockPath: src.String(evaluator.KeyStateFile, evaluator.DefaultStateFile)}, nil
}
