// Package validate checks the deployment files offline, with the parsers
// of the tools that will read them (BuildKit's Dockerfile parser,
// compose-go, Kustomize and the Kubernetes API types), since no image can
// be built and no schema downloaded where the tests run. It is a module of
// its own so that these libraries never enter the server's build.
package validate
