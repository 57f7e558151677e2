package conform

import "github.com/petstore/petstore/internal/conform/report"

// The report of a run and the table of checks live in
// internal/conform/report; these names keep the kit's API whole.
type (
	Report    = report.Report
	Result    = report.Result
	Failure   = report.Failure
	Skip      = report.Skip
	Gap       = report.Gap
	Promise   = report.Promise
	CheckInfo = report.CheckInfo
)

// The verdicts of a run (report.Pass, report.Fail, report.Incomplete).
const (
	Pass       = report.Pass
	Fail       = report.Fail
	Incomplete = report.Incomplete
)

var (
	// Checks is the one table of checks (report.Checks).
	Checks = report.Checks
	// Families lists the families of defect (report.Families).
	Families = report.Families
)
