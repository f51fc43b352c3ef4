package core

import (
	"context"
	"fmt"
	"slices"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

var _ checkpoint.ChildLister = (*Checkpointer)(nil)

// Children implements checkpoint.ChildLister with the driver's Children.
func (c *Checkpointer) Children(ctx context.Context, threadID string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []string
	err := c.view(ctx, func(r Reader) error {
		var err error
		out, err = r.Children(threadID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list the subgraph threads of %s: %w", threadID, err)
	}
	slices.Sort(out)
	return out, nil
}
