# tap.sh: the TAP counting the host tests share (sourced): ok STATUS NAME [DETAIL], tap_done.
# shellcheck shell=bash

n=0 failed=0

ok() {	# ok STATUS NAME [DETAIL]: STATUS 0 passes
	n=$((n + 1))
	if [[ $1 == 0 ]]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2${3:+ # $3}"
		failed=$((failed + 1))
	fi
}

# tap_done: the plan, and the exit status: 0 when every test passed.
tap_done() {
	echo "1..$n"
	((failed == 0))
}
