package main

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// reach returns the $refs the nodes make, and those the components they
// name make in turn.
func reach(components *yaml.Node, from ...*yaml.Node) map[string]bool {
	seen := map[string]bool{}
	var queue []string
	var collect func(n *yaml.Node)
	collect = func(n *yaml.Node) {
		if n == nil {
			return
		}
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if k, v := n.Content[i], n.Content[i+1]; k.Value == "$ref" && v.Kind == yaml.ScalarNode && !seen[v.Value] {
					seen[v.Value] = true
					queue = append(queue, v.Value)
				}
			}
		}
		for _, c := range n.Content {
			collect(c)
		}
	}
	for _, n := range from {
		collect(n)
	}
	for len(queue) > 0 {
		ref := queue[0]
		queue = queue[1:]
		if section, name, ok := strings.Cut(strings.TrimPrefix(ref, "#/components/"), "/"); ok {
			collect(get(get(components, section), name))
		}
	}
	return seen
}

// prune removes the components nothing refers to: gnostic describes every
// response message, also those a response_body replaced, and
// google.protobuf.Any, which the error details are described without.
// A component is used when the rest of the document (or a used component)
// $refs it; security schemes are named by the security requirements
// instead, and stay.
func prune(root *yaml.Node) {
	components := get(root, "components")
	var rest []*yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "components" {
			rest = append(rest, root.Content[i+1])
		}
	}
	used := reach(components, rest...)
	for i := 0; i+1 < len(components.Content); i += 2 {
		section, entries := components.Content[i].Value, components.Content[i+1]
		if section == "securitySchemes" {
			continue
		}
		kept := entries.Content[:0]
		for j := 0; j+1 < len(entries.Content); j += 2 {
			if used["#/components/"+section+"/"+entries.Content[j].Value] {
				kept = append(kept, entries.Content[j], entries.Content[j+1])
			}
		}
		entries.Content = kept
	}
}
