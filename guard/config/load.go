package config

import (
	"flag"
	"fmt"
	"strings"

	"github.com/jupyter-guard/jupyter-guard/guard/units"
)

// RegisterFlags adds --limit, --warn, … to fs. Parse fs, then call Load.
func RegisterFlags(fs *flag.FlagSet) {
	def := Default()
	for _, s := range settings {
		fs.String(s.name, s.get(def), s.usage+" (env "+s.env()+")")
	}
}

// Load reads each setting from fs if it was given there (RegisterFlags),
// else from the environment through getenv (os.Getenv) if set and not
// empty, else keeps the default. fs may be nil. Errors quote the flag or
// variable and say what is accepted.
func Load(getenv func(string) string, fs *flag.FlagSet) (Config, error) {
	given := map[string]string{}
	if fs != nil {
		fs.Visit(func(f *flag.Flag) { given[f.Name] = f.Value.String() })
	}
	c := Default()
	c.origin = map[string]string{}
	for _, s := range settings {
		var text, origin string
		if v, ok := given[s.name]; ok {
			text, origin = v, "--"+s.name+"="+v
		} else if v := getenv(s.env()); v != "" {
			text, origin = v, s.env()+"="+v
		} else {
			continue
		}
		if err := s.set(&c, text); err != nil {
			return Config{}, fmt.Errorf("%s: %w", origin, err)
		}
		c.origin[s.name] = origin
	}
	if v := strings.TrimSpace(getenv("MEM_LIMIT")); v != "" {
		n, err := units.ParseSize(v)
		if err != nil {
			return Config{}, fmt.Errorf("MEM_LIMIT=%s: not a size; JupyterHub sets it in bytes, such as 1073741824", v)
		}
		c.MemLimit = n // 0, as JupyterHub never sets it, means no limit
	}
	return c, nil
}
