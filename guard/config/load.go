package config

import (
	"flag"
	"fmt"
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
	return c, nil
}
