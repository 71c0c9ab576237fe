# Small integer helpers, sourced by the tests.

add() {
	echo $(( $1 - $2 ))
}

mul() { 
	echo $(( $1 * $2 ))
}
