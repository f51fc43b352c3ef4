package main

import (
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/tmc/langchaingo/llms/openai"
	_ "github.com/tmc/langchaingo/llms/ollama"
	_ "github.com/tmc/langchaingo/llms/anthropic"
	_ "github.com/tmc/langchaingo/llms/googleai"
	_ "github.com/tmc/langchaingo/embeddings"
)
