package main

import (
	"fmt"
	"strings"
)

const (
	changelogTitle = "# Changelog of the contract (openapi.yaml)\n"
	unreleased     = "## Unreleased"
)

// changelogHead introduces the file; oasdiffVersion names the tool that
// found the changes.
func changelogHead(oasdiffVersion string) string {
	return changelogTitle + `
One line a change, found by oasdiff ` + oasdiffVersion + ` (tools/compat). **breaking**
marks a change that needs a new major version; **breaking by oasdiff, waived**
one that ` + "`released/waivers.yaml`" + ` accepts as additive, with its reason; the others
are additive (minor) or wording (patch). ` + "`make changelog`" + ` writes the Unreleased section
from the difference between ` + "`openapi.yaml`" + ` and the released contract
(` + "`released/openapi.yaml`" + `); ` + "`make release-contract`" + ` names it with the new
version and moves the baseline. Do not edit it by hand.

`
}

// section renders the report's changes under heading, one line a change.
func section(heading string, r *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", heading)
	if r.Required == None {
		b.WriteString("No change since the release.\n\n")
		return b.String()
	}
	for _, c := range r.Changes {
		mark, waived := "", ""
		if c.Raise == Major {
			mark = "**breaking** "
		}
		if c.Waived != "" {
			mark = "**breaking by oasdiff, waived** "
			waived = " — waived (released/waivers.yaml): " + c.Waived
		}
		fmt.Fprintf(&b, "- %s`%s`: %s%s\n", mark, strings.ReplaceAll(c.Where, ", ", "`, `"), c.Text, waived)
	}
	if r.Wording {
		b.WriteString("- wording: descriptions or other prose changed, no change to behaviour\n")
	}
	b.WriteString("\n")
	return b.String()
}

// releasedSections is the part of an existing changelog after its Unreleased
// section: the sections of past releases, kept as they are. Without one, the
// base release gets a section of its own.
func releasedSections(old, baseVersion string) string {
	rest := old
	if i := strings.Index(rest, unreleased); i >= 0 {
		rest = rest[i+len(unreleased):]
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		return rest[i+1:]
	}
	return fmt.Sprintf("## %s\n\nThe first released contract.\n", baseVersion)
}

// changelog is the whole file: the head, the Unreleased section, and the
// past releases. At a release the changes get a section named after the new
// version, and Unreleased starts empty.
func changelog(old string, r *Report, oasdiffVersion string, release bool) string {
	out := changelogHead(oasdiffVersion)
	if release {
		out += section(fmt.Sprintf("%s: %s against the released %s", unreleased, r.RevVersion, r.RevVersion), &Report{})
		out += section("## "+r.RevVersion, r)
	} else {
		out += section(fmt.Sprintf("%s: %s against the released %s", unreleased, r.RevVersion, r.BaseVersion), r)
	}
	return out + releasedSections(old, r.BaseVersion)
}
