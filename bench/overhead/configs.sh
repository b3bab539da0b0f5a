# bench/overhead/configs.sh - sourced by run.sh and where.sh.
# config_split CONFIG: a variant "gpuscope+ENV=VALUE+--profile-option..."
# into the arrays cfg_envs (ENV=VALUE words) and cfg_opts (profile options).
config_split() {
	local item
	local -a items
	cfg_envs=()
	cfg_opts=()
	IFS=+ read -r -a items <<<"$1"
	for item in "${items[@]:1}"; do
		case $item in
		--*) cfg_opts+=("$item") ;;
		*=*) cfg_envs+=("$item") ;;
		esac
	done
}
