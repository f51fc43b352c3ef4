// Package all links every builtin node type and builtin tool into a binary:
// import it for its side effects.
//
//	import _ "github.com/graphctl/graphctl/builtin-nodes/all"
package all

import (
	// Builtin node types and tools, registered in their init functions.
	_ "github.com/graphctl/graphctl/builtin-nodes/appliance"
	_ "github.com/graphctl/graphctl/builtin-nodes/cognitive"
	_ "github.com/graphctl/graphctl/builtin-nodes/contract"
	_ "github.com/graphctl/graphctl/builtin-nodes/extract"
	_ "github.com/graphctl/graphctl/builtin-nodes/flow"
	_ "github.com/graphctl/graphctl/builtin-nodes/hitl"
	_ "github.com/graphctl/graphctl/builtin-nodes/httpcall"
	_ "github.com/graphctl/graphctl/builtin-nodes/interrupt"
	_ "github.com/graphctl/graphctl/builtin-nodes/literature"
	_ "github.com/graphctl/graphctl/builtin-nodes/llm"
	_ "github.com/graphctl/graphctl/builtin-nodes/localtools"
	_ "github.com/graphctl/graphctl/builtin-nodes/mcp"
	_ "github.com/graphctl/graphctl/builtin-nodes/rag"
	_ "github.com/graphctl/graphctl/builtin-nodes/telegram"
	_ "github.com/graphctl/graphctl/builtin-nodes/tool"
	_ "github.com/graphctl/graphctl/builtin-nodes/websearch"
)
