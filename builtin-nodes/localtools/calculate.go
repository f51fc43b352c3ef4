package localtools

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"

	"github.com/graphctl/graphctl/builtin-nodes/tool"
)

// maxExpressionLen and maxExpressionNodes bound what calculate accepts.
const (
	maxExpressionLen   = 1000
	maxExpressionNodes = 500
)

var (
	arithmeticOps = map[string]bool{"+": true, "-": true, "*": true, "/": true, "%": true, "^": true, "**": true}
	// Builtins of expr-lang that calculate allows.
	mathBuiltins = []string{"abs", "ceil", "floor", "round", "min", "max"}
	// Functions calculate adds.
	mathFuncs = map[string]func(...float64) (float64, error){
		"sqrt": func(a ...float64) (float64, error) {
			if a[0] < 0 {
				return 0, fmt.Errorf("sqrt of a negative number (%g)", a[0])
			}
			return math.Sqrt(a[0]), nil
		},
		"pow": func(a ...float64) (float64, error) { return math.Pow(a[0], a[1]), nil },
	}
	mathArity = map[string]int{"sqrt": 1, "pow": 2}
)

// Calculate returns the calculate tool.
func Calculate() tool.Tool {
	return tool.Tool{
		Name: "calculate",
		Description: "Evaluates an arithmetic expression: numbers, + - * / % and ^ or ** (power), parentheses, " +
			"abs, ceil, floor, round, min, max, sqrt, pow. Example: (17 * 23) / 2",
		Input: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"expression": map[string]any{"type": "string", "description": "the arithmetic expression, e.g. 17 * 23"},
			},
			"required": []any{"expression"},
		},
		Func: func(_ context.Context, args map[string]any) (tool.Result, error) {
			src, _ := args["expression"].(string)
			v, err := Evaluate(src)
			if err != nil {
				return tool.Result{}, err
			}
			text := formatNumber(v)
			return tool.Result{Text: text, Data: map[string]any{"expression": src, "result": v}}, nil
		},
	}
}

// Evaluate computes an arithmetic expression. Anything but numbers, the
// arithmetic operators and the allowed math functions is rejected before the
// expression is compiled, so no variable, member, string or other function
// can be reached.
func Evaluate(src string) (float64, error) {
	src = strings.TrimSpace(src)
	switch {
	case src == "":
		return 0, fmt.Errorf("calculate: the expression is empty")
	case len(src) > maxExpressionLen:
		return 0, fmt.Errorf("calculate: the expression is %d characters long; at most %d are accepted", len(src), maxExpressionLen)
	}
	tree, err := parser.Parse(src)
	if err != nil {
		return 0, fmt.Errorf("calculate: %q is not a valid expression: %w", src, err)
	}
	if err := arithmeticOnly(tree.Node); err != nil {
		return 0, fmt.Errorf("calculate: %q: %w", src, err)
	}
	// Every number is a float64, so that integer arithmetic cannot
	// overflow and wrap around to a wrong answer (3000000000 * 4000000000);
	// % on floats is math.Mod.
	opts := []expr.Option{
		expr.Env(map[string]any{}), expr.DisableAllBuiltins(), expr.MaxNodes(maxExpressionNodes), expr.AsFloat64(),
		expr.Patch(floatLiterals{}),
		expr.Function(modFunc, func(params ...any) (any, error) {
			x, okX := toFloat(params[0])
			y, okY := toFloat(params[1])
			if !okX || !okY {
				return nil, fmt.Errorf("%% needs two numbers, got %T and %T", params[0], params[1])
			}
			return math.Mod(x, y), nil
		}, new(func(float64, float64) float64)),
		expr.Operator("%", modFunc),
	}
	for _, b := range mathBuiltins {
		opts = append(opts, expr.EnableBuiltin(b))
	}
	for name, fn := range mathFuncs {
		arity := mathArity[name]
		opts = append(opts, expr.Function(name, func(params ...any) (any, error) {
			if len(params) != arity {
				return nil, fmt.Errorf("%s takes %d arguments, got %d", name, arity, len(params))
			}
			xs := make([]float64, len(params))
			for i, p := range params {
				f, ok := toFloat(p)
				if !ok {
					return nil, fmt.Errorf("%s: argument %d is not a number", name, i+1)
				}
				xs[i] = f
			}
			return fn(xs...)
		}))
	}
	prog, err := expr.Compile(src, opts...)
	if err != nil {
		return 0, fmt.Errorf("calculate: %q: %w", src, err)
	}
	out, err := expr.Run(prog, map[string]any{})
	if err != nil {
		return 0, fmt.Errorf("calculate: %q: %w", src, err)
	}
	v, ok := toFloat(out)
	if !ok {
		return 0, fmt.Errorf("calculate: %q does not yield a number (got %T)", src, out)
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("calculate: %q has no finite value (division by zero?)", src)
	}
	return v, nil
}

// modFunc is the function % is evaluated with; the name cannot be written in
// an expression, since arithmeticOnly refuses it.
const modFunc = "mod"

// floatLiterals turns integer literals into float literals.
type floatLiterals struct{}

// Visit implements ast.Visitor.
func (floatLiterals) Visit(n *ast.Node) {
	if i, ok := (*n).(*ast.IntegerNode); ok {
		ast.Patch(n, &ast.FloatNode{Value: float64(i.Value)})
	}
}

// arithmeticOnly accepts number literals, unary signs, arithmetic operators
// and calls of the allowed math functions.
func arithmeticOnly(n ast.Node) error {
	switch x := n.(type) {
	case *ast.IntegerNode, *ast.FloatNode:
		return nil
	case *ast.UnaryNode:
		if x.Operator != "-" && x.Operator != "+" {
			return fmt.Errorf("operator %q is not arithmetic", x.Operator)
		}
		return arithmeticOnly(x.Node)
	case *ast.BinaryNode:
		if !arithmeticOps[x.Operator] {
			return fmt.Errorf("operator %q is not arithmetic (allowed: + - * / %% ^ **)", x.Operator)
		}
		if err := arithmeticOnly(x.Left); err != nil {
			return err
		}
		return arithmeticOnly(x.Right)
	case *ast.BuiltinNode:
		return callArgs(x.Name, x.Arguments)
	case *ast.CallNode:
		id, ok := x.Callee.(*ast.IdentifierNode)
		if !ok {
			return fmt.Errorf("only the math functions %s can be called", allowedFuncs())
		}
		return callArgs(id.Value, x.Arguments)
	case *ast.IdentifierNode:
		return fmt.Errorf("%q is not a number: variables are not available", x.Value)
	}
	return fmt.Errorf("%q is not arithmetic", n.String())
}

func callArgs(name string, args []ast.Node) error {
	known := mathFuncs[name] != nil
	for _, b := range mathBuiltins {
		known = known || b == name
	}
	if !known {
		return fmt.Errorf("function %q is not available; use %s", name, allowedFuncs())
	}
	for _, a := range args {
		if err := arithmeticOnly(a); err != nil {
			return err
		}
	}
	return nil
}

func allowedFuncs() string {
	return strings.Join(append(append([]string(nil), mathBuiltins...), "sqrt", "pow"), ", ")
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	}
	return 0, false
}

// formatNumber prints whole numbers without a fraction and others with up
// to 12 significant digits.
func formatNumber(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', 12, 64)
}
