package conform

import (
	"context"
	"fmt"
)

// RunUntilFailed is Run, stopped as soon as check has failed once: the
// mutation suite asks only whether its check catches a mutant, which most
// do in the first cases. A run stopped so sends nothing more and reports
// what it judged until then (TestMutantEvidence runs each mutant whole).
func RunUntilFailed(ctx context.Context, cfg Config, check string) (*Report, error) {
	r, err := newRun(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCannotRun, err)
	}
	r.stopOn = check
	return r.run(ctx)
}

// EveryResponse are the checks that judge every answer, whatever sent it.
func EveryResponse() []string { return everyResponse }
