package router

func parseRules(data []byte, file string) (*Rules, error) {
	return nil, ConfigErrors{{File: file, Message: "rules loading not built yet"}}
}
