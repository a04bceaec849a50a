package client

import (
	"os"
	"regexp"
	"strings"
)

// templateRef matches what Python's string.Template substitutes: $$,
// $name and ${name}.
var templateRef = regexp.MustCompile(`\$(?:(\$)|([_A-Za-z][_A-Za-z0-9]*)|\{([_A-Za-z][_A-Za-z0-9]*)\})`)

// expandTemplate fills $NAME and ${NAME} in a kernelspec env value from the
// environment, as jupyter_client does with string.Template.safe_substitute:
// $$ is a dollar, unknown names stay as they are.
func expandTemplate(value string, lookup func(string) (string, bool)) string {
	return templateRef.ReplaceAllStringFunc(value, func(ref string) string {
		if ref == "$$" {
			return "$"
		}
		name := strings.Trim(ref, "${}")
		if v, ok := lookup(name); ok {
			return v
		}
		return ref
	})
}

// kernelEnv is the kernel's environment: ours, then the kernelspec's env
// (its templates filled from ours), then extra, last value winning.
func kernelEnv(specEnv map[string]string, extra []string) []string {
	env := os.Environ()
	for k, v := range specEnv {
		env = append(env, k+"="+expandTemplate(v, os.LookupEnv))
	}
	return append(env, extra...)
}

// argvPlaceholder is jupyter_client's pattern for kernelspec argv
// placeholders; unknown ones are left as written.
var argvPlaceholder = regexp.MustCompile(`\{([A-Za-z0-9_]+)\}`)

// kernelArgv fills {connection_file}, {resource_dir} and {prefix} in argv.
func kernelArgv(argv []string, values map[string]string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = argvPlaceholder.ReplaceAllStringFunc(a, func(p string) string {
			if v, ok := values[p[1:len(p)-1]]; ok {
				return v
			}
			return p
		})
	}
	return out
}
