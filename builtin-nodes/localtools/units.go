package localtools

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/graphctl/graphctl/builtin-nodes/tool"
)

// unit is a unit of length or mass, as a factor to the dimension's base unit
// (metre, kilogram). Temperatures are converted by formula.
type unit struct {
	symbol    string
	dimension string
	factor    float64
}

const (
	dimLength      = "length"
	dimMass        = "mass"
	dimTemperature = "temperature"
)

// units maps every accepted name (lower case) to its unit.
var units = func() map[string]unit {
	m := map[string]unit{}
	add := func(u unit, names ...string) {
		m[strings.ToLower(u.symbol)] = u
		for _, n := range names {
			m[n] = u
		}
	}
	add(unit{"m", dimLength, 1}, "meter", "meters", "metre", "metres")
	add(unit{"km", dimLength, 1000}, "kilometer", "kilometers", "kilometre", "kilometres")
	add(unit{"cm", dimLength, 0.01}, "centimeter", "centimeters", "centimetre", "centimetres")
	add(unit{"mm", dimLength, 0.001}, "millimeter", "millimeters", "millimetre", "millimetres")
	add(unit{"mi", dimLength, 1609.344}, "mile", "miles")
	add(unit{"yd", dimLength, 0.9144}, "yard", "yards")
	add(unit{"ft", dimLength, 0.3048}, "foot", "feet")
	add(unit{"in", dimLength, 0.0254}, "inch", "inches")
	add(unit{"nmi", dimLength, 1852}, "nautical mile", "nautical miles")
	add(unit{"kg", dimMass, 1}, "kilogram", "kilograms", "kilo", "kilos")
	add(unit{"g", dimMass, 0.001}, "gram", "grams")
	add(unit{"mg", dimMass, 1e-6}, "milligram", "milligrams")
	add(unit{"t", dimMass, 1000}, "tonne", "tonnes", "metric ton", "metric tons")
	add(unit{"lb", dimMass, 0.45359237}, "lbs", "pound", "pounds")
	add(unit{"oz", dimMass, 0.028349523125}, "ounce", "ounces")
	add(unit{"st", dimMass, 6.35029318}, "stone", "stones")
	add(unit{"C", dimTemperature, 0}, "°c", "celsius", "degc")
	add(unit{"F", dimTemperature, 0}, "°f", "fahrenheit", "degf")
	add(unit{"K", dimTemperature, 0}, "kelvin")
	return m
}()

// ConvertUnits returns the convert_units tool.
func ConvertUnits() tool.Tool {
	return tool.Tool{
		Name:        "convert_units",
		Description: "Converts a value between units of length (m, km, cm, mm, mi, yd, ft, in, nmi), mass (kg, g, mg, t, lb, oz, st) or temperature (C, F, K).",
		Input: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"value": map[string]any{"type": "number", "description": "the quantity to convert"},
				"from":  map[string]any{"type": "string", "description": "the unit of value, e.g. km, lb, F"},
				"to":    map[string]any{"type": "string", "description": "the unit to convert to, e.g. mi, kg, C"},
			},
			"required": []any{"value", "from", "to"},
		},
		Func: func(_ context.Context, args map[string]any) (tool.Result, error) {
			v, ok := toFloat(args["value"])
			if !ok {
				return tool.Result{}, fmt.Errorf("convert_units: value must be a number, got %v", args["value"])
			}
			from, _ := args["from"].(string)
			to, _ := args["to"].(string)
			out, fu, tu, err := Convert(v, from, to)
			if err != nil {
				return tool.Result{}, err
			}
			text := fmt.Sprintf("%s %s = %s %s", formatNumber(roundTo(v, 10)), fu.symbol, formatNumber(roundTo(out, 10)), tu.symbol)
			return tool.Result{Text: text, Data: map[string]any{
				"value": v, "from": fu.symbol, "to": tu.symbol, "result": out, "dimension": fu.dimension,
			}}, nil
		},
	}
}

// Convert converts value from one unit to another of the same dimension.
func Convert(value float64, from, to string) (float64, unit, unit, error) {
	fu, err := lookupUnit(from)
	if err != nil {
		return 0, unit{}, unit{}, fmt.Errorf("convert_units: from: %w", err)
	}
	tu, err := lookupUnit(to)
	if err != nil {
		return 0, unit{}, unit{}, fmt.Errorf("convert_units: to: %w", err)
	}
	if fu.dimension != tu.dimension {
		return 0, fu, tu, fmt.Errorf("convert_units: cannot convert %s (%s) to %s (%s)", fu.symbol, fu.dimension, tu.symbol, tu.dimension)
	}
	if fu.dimension != dimTemperature {
		return value * fu.factor / tu.factor, fu, tu, nil
	}
	var kelvin float64
	switch fu.symbol {
	case "C":
		kelvin = value + 273.15
	case "F":
		kelvin = (value-32)*5/9 + 273.15
	default:
		kelvin = value
	}
	if kelvin < 0 {
		return 0, fu, tu, fmt.Errorf("convert_units: %g %s is below absolute zero", value, fu.symbol)
	}
	switch tu.symbol {
	case "C":
		return kelvin - 273.15, fu, tu, nil
	case "F":
		return (kelvin-273.15)*9/5 + 32, fu, tu, nil
	}
	return kelvin, fu, tu, nil
}

func lookupUnit(name string) (unit, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	if u, ok := units[key]; ok {
		return u, nil
	}
	symbols := map[string]bool{}
	for _, u := range units {
		symbols[u.symbol] = true
	}
	list := make([]string, 0, len(symbols))
	for s := range symbols {
		list = append(list, s)
	}
	sort.Strings(list)
	return unit{}, fmt.Errorf("unknown unit %q (known: %s)", name, strings.Join(list, ", "))
}

// roundTo rounds to n significant decimal places, removing float noise such
// as 0.30000000000000004 from what people read.
func roundTo(v float64, digits int) float64 {
	s := fmt.Sprintf("%.*g", digits, v)
	var out float64
	if _, err := fmt.Sscan(s, &out); err != nil {
		return v
	}
	return out
}
