package model

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"

	antonmedv "github.com/antonmedv/expr"
	antonmedvfile "github.com/antonmedv/expr/file"
	antonmedvvm "github.com/antonmedv/expr/vm"
	exprlang "github.com/expr-lang/expr"
	exprlangfile "github.com/expr-lang/expr/file"
	exprlangvm "github.com/expr-lang/expr/vm"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// How an AnalysisRun's measurement is judged: the analysis controller
// evaluates a metric's successCondition and failureCondition against the
// value the provider measured, with the expression library its release
// pins, and combines the two into the measurement's phase. The conditions
// are evaluated here with the same library at the same version, so that
// what lint says about a condition (it passes on an empty result, it does
// not compile) is what that controller would do with it.

// ExprLibrary is the expression library (module and version) a controller
// release evaluates conditions with.
type ExprLibrary string

// The libraries the modeled releases pin in their go.mod.
const (
	// ExprAntonmedv is used up to v1.9.
	ExprAntonmedv ExprLibrary = "github.com/antonmedv/expr v1.15.5"
	// ExprLang, the same library under its new module path, from v1.10.
	ExprLang ExprLibrary = "github.com/expr-lang/expr v1.17.7"
)

// ConditionLibrary is the library release v evaluates conditions with
// (fact ev.expr-lang).
func ConditionLibrary(v upstream.Version) ExprLibrary {
	if upstream.At("ev.expr-lang", v).Absent {
		return ExprAntonmedv
	}
	return ExprLang
}

// conditionEnv is what a condition can name: the measured value as result
// and the helper functions the controller offers (asInt, asFloat, isNaN,
// isInf, isNil, default). The helpers are our own, with the controller's
// contract: isNil and default look at the measured value whatever their
// argument, and the conversions panic (an evaluation error) on what they
// cannot convert.
func conditionEnv(result any) map[string]any {
	return map[string]any{
		"result":  deref(result),
		"asInt":   func(x any) int64 { return int64(toFloat(x, "asInt")) },
		"asFloat": func(x any) float64 { return toFloat(x, "asFloat") },
		"isNaN":   math.IsNaN,
		"isInf":   func(f float64) bool { return math.IsInf(f, 0) },
		"isNil":   func(any) bool { return isNilValue(result) },
		"default": func(_ any, fallback any) any {
			if isNilValue(result) {
				return fallback
			}
			return deref(result)
		},
	}
}

// isNilValue: nil itself, or a nil pointer, map, slice or channel (a
// provider with no data passes a nil *float64).
func isNilValue(x any) bool {
	if x == nil {
		return true
	}
	switch v := reflect.ValueOf(x); v.Kind() {
	case reflect.Ptr, reflect.Map, reflect.Slice, reflect.Chan:
		return v.IsNil()
	}
	return false
}

// deref is the value a pointer points to; nil for a nil pointer.
func deref(x any) any {
	if isNilValue(x) {
		return nil
	}
	if v := reflect.ValueOf(x); v.Kind() == reflect.Ptr {
		return v.Elem().Interface()
	}
	return x
}

func toFloat(x any, fn string) float64 {
	v := reflect.ValueOf(x)
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		return v.Float()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(v.Uint())
	case reflect.String:
		f, err := strconv.ParseFloat(v.String(), 64)
		if err != nil {
			panic(err)
		}
		return f
	}
	panic(fmt.Sprintf("%s() not supported on %T %v", fn, x, x))
}

// EvalCondition evaluates one condition against a measured value as release
// v does: compiled against the environment of the value's type, run, and
// required to yield a bool. An error is what makes the measurement Error.
func EvalCondition(v upstream.Version, condition string, result any) (bool, error) {
	env := conditionEnv(result)
	var out any
	var err error
	switch ConditionLibrary(v) {
	case ExprLang:
		var p *exprlangvm.Program
		if p, err = compileLang(condition, env); err == nil {
			out, err = runLang(p, env)
		}
		var fe *exprlangfile.Error
		if errors.As(err, &fe) {
			err = errors.New(fe.Message)
		}
	default:
		var p *antonmedvvm.Program
		if p, err = compileAntonmedv(condition, env); err == nil {
			out, err = runAntonmedv(p, env)
		}
		var fe *antonmedvfile.Error
		if errors.As(err, &fe) {
			err = errors.New(fe.Message)
		}
	}
	if err != nil {
		return false, err
	}
	b, ok := out.(bool)
	if !ok {
		return false, fmt.Errorf("expected bool, but got %T", out)
	}
	return b, nil
}

// CompileCondition reports whether a condition compiles at all for release
// v, whatever the value's type: an error here (a syntax error, an unknown
// name) errors every measurement of the metric. The controller compiles
// against the measured value's own type, so result is left untyped here:
// only what fails for every value fails.
func CompileCondition(v upstream.Version, condition string) error {
	return compileWith(v, condition, untypedEnv{})
}

// CompileConditionFor reports whether a condition compiles for release v
// against a measured value of result's type (a Prometheus vector is always
// a []float64): a type error here, such as an aggregate the library does
// not offer for a list, errors every measurement of that type, whatever
// the values.
func CompileConditionFor(v upstream.Version, condition string, result any) error {
	return compileWith(v, condition, conditionEnv(result))
}

// compileWith compiles condition for release v's expression library in
// env, with the library's error reduced to its message.
func compileWith(v upstream.Version, condition string, env any) error {
	var err error
	switch ConditionLibrary(v) {
	case ExprLang:
		_, err = compileLang(condition, env)
		var fe *exprlangfile.Error
		if errors.As(err, &fe) {
			err = errors.New(fe.Message)
		}
	default:
		_, err = compileAntonmedv(condition, env)
		var fe *antonmedvfile.Error
		if errors.As(err, &fe) {
			err = errors.New(fe.Message)
		}
	}
	return err
}

// untypedEnv names what conditionEnv names, with result of no particular
// type (a map environment types each name by its value, and a nil value
// types result as nil).
type untypedEnv struct {
	Result  any                `expr:"result"`
	AsInt   func(any) int64    `expr:"asInt"`
	AsFloat func(any) float64  `expr:"asFloat"`
	IsNaN   func(float64) bool `expr:"isNaN"`
	IsInf   func(float64) bool `expr:"isInf"`
	IsNil   func(any) bool     `expr:"isNil"`
	Default func(any, any) any `expr:"default"`
}

// MeasurementPhase is the phase release v gives a measurement of result
// under these conditions: a condition that does not evaluate makes it
// Error (ev.eval-error); with only a successCondition, false is Failed
// (ev.only-success); with only a failureCondition, false is Successful
// (ev.only-failure); with both, a true failureCondition wins and neither
// true is Inconclusive (ev.inconclusive); with none, Successful.
func MeasurementPhase(v upstream.Version, success, failure string, result any) (v1alpha1.AnalysisPhase, error) {
	var ok, bad bool
	var err error
	if success != "" {
		if ok, err = EvalCondition(v, success, result); err != nil {
			return v1alpha1.AnalysisPhaseError, fmt.Errorf("successCondition: %w", err)
		}
	}
	if failure != "" {
		if bad, err = EvalCondition(v, failure, result); err != nil {
			return v1alpha1.AnalysisPhaseError, fmt.Errorf("failureCondition: %w", err)
		}
	}
	switch {
	case success == "" && failure == "":
		return v1alpha1.AnalysisPhaseSuccessful, nil
	case failure == "":
		bad = !ok
	case success == "":
		ok = !bad
	}
	switch {
	case bad:
		return v1alpha1.AnalysisPhaseFailed, nil
	case !ok:
		return v1alpha1.AnalysisPhaseInconclusive, nil
	}
	return v1alpha1.AnalysisPhaseSuccessful, nil
}

// The libraries turn a panic while running into an error themselves; a
// condition they choke on while compiling must not stop a lint run either.
func compileLang(condition string, env any) (p *exprlangvm.Program, err error) {
	defer recoverInto(&err)
	return exprlang.Compile(condition, exprlang.Env(env))
}

func compileAntonmedv(condition string, env any) (p *antonmedvvm.Program, err error) {
	defer recoverInto(&err)
	return antonmedv.Compile(condition, antonmedv.Env(env))
}

func recoverInto(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("the expression library failed on it: %v", r)
	}
}

func runLang(p *exprlangvm.Program, env any) (out any, err error) {
	defer recoverInto(&err)
	return exprlang.Run(p, env)
}

func runAntonmedv(p *antonmedvvm.Program, env any) (out any, err error) {
	defer recoverInto(&err)
	return antonmedv.Run(p, env)
}
