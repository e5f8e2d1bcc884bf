package apitest

import (
	"testing"

	"coffer/api"
	"coffer/jobs/simplefin/bridge/bridgetest"
)

// BridgeEnv is an env whose SimpleFIN client may reach a fake Bridge on
// loopback over plain HTTP, with a fresh fake; opts change the env further.
func BridgeEnv(t *testing.T, opts ...func(*api.Options)) (*Env, *bridgetest.Server) {
	t.Helper()
	e := NewEnv(t, append([]func(*api.Options){func(o *api.Options) { o.SimpleFINAllowHTTP = true }}, opts...)...)
	return e, bridgetest.New(t)
}
