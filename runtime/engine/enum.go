package engine

import (
	"fmt"

	"github.com/graphctl/graphctl/runtime/compile"
)

// checkEnum rejects a write of a value outside the field's enum, naming the
// field and its allowed values. Input, resume answers, state updates and node
// updates all pass through it (see applyWrites).
func checkEnum(f *compile.Field, writer string, v any) error {
	err := f.CheckEnum(v)
	if err == nil || writer == inputWriter {
		return err
	}
	return fmt.Errorf("node %q wrote %w", writer, err)
}
