package main

import (
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The descriptions come from the protos' comments, written for the
// repository's readers: they cite decisions, issues and docs/ files a
// partner reading the OpenAPI description does not have. cleanText drops
// those citations; leftOver finds any that a rule below did not catch, so
// generation fails instead of publishing it (reword the proto comment).
var (
	// ref is one citation: "docs/decisions/0296", "decisions 0284, 0286",
	// "issue 12", "docs/partners.md, "Webhooks"".
	ref = `(?:docs/decisions/\d{4}(?:,\s*\d{4})*` +
		`|decisions?\s+\d{4}(?:(?:,|\s+and)\s*\d{4})*` +
		`|issue\s+\d+` +
		`|docs/[\w./-]+\.md(?:,\s*"[^"]*")?)`
	refs = ref + `(?:\s*[,;]\s*` + ref + `)*`
	// onlyRefs is a parenthesis that cites and says nothing else.
	onlyRefs = regexp.MustCompile(`\s*\(\s*` + refs + `\s*\)`)
	// trailingRefs ends a parenthesis that says something first:
	// "(the id, docs/decisions/0112)".
	trailingRefs = regexp.MustCompile(`\s*[,;]\s*` + refs + `\s*\)`)
	// repositoryPath is what must not be left.
	repositoryPath = regexp.MustCompile(`docs/|decisions?\s+\d{4}|issue\s+\d+|\b[\w-]+\.(?:md|go|sh)\b|\b(?:proto|scripts|server|clients|cmd|tools)/`)
)

// cleanText drops the repository citations of s and the one space gnostic
// leaves at the start of each continued comment line.
func cleanText(s string) string {
	lines := strings.Split(s, "\n")
	indented := len(lines) > 1
	for _, l := range lines[1:] {
		if l != "" && !strings.HasPrefix(l, " ") {
			indented = false
		}
	}
	if indented {
		for i := 1; i < len(lines); i++ {
			lines[i] = strings.TrimPrefix(lines[i], " ")
		}
		s = strings.Join(lines, "\n")
	}
	s = onlyRefs.ReplaceAllString(s, "")
	return trailingRefs.ReplaceAllString(s, ")")
}

// cleanDescriptions cleans every description and summary in the document
// and fails on a repository path that is left, naming where.
func cleanDescriptions(n *yaml.Node) error {
	var left []string
	var walk func(n *yaml.Node, at string)
	walk = func(n *yaml.Node, at string) {
		switch n.Kind {
		case yaml.DocumentNode, yaml.SequenceNode:
			for _, c := range n.Content {
				walk(c, at)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if (k.Value == "description" || k.Value == "summary") && v.Kind == yaml.ScalarNode {
					v.Value = cleanText(v.Value)
					if m := repositoryPath.FindString(v.Value); m != "" {
						left = append(left, fmt.Sprintf("%s: %q in %q", at, m, v.Value))
					}
					continue
				}
				walk(v, at+"/"+k.Value)
			}
		}
	}
	walk(n, "")
	if len(left) > 0 {
		return fmt.Errorf("descriptions cite the repository (reword the proto comment):\n  %s", strings.Join(left, "\n  "))
	}
	return nil
}
