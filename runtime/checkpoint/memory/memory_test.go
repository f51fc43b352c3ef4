package memory_test

import (
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/checkpoint/checkpointtest"
	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
)

func TestConformance(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Checkpointer { return memory.New() })
}
