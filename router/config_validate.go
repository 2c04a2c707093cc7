package router

func (d *decoder) validate(r *Rules, sh *shardingConfig) {}
