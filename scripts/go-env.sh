# shellcheck shell=bash
# Sourced (`. scripts/go-env.sh`) by every script that builds Go code: the Kubernetes components,
# helm and the Go peer extenders need Go >= 1.26. Defines fleetsched_go_env, which puts such a
# toolchain first on PATH, taking the first of:
#   1. `go` on PATH, if it is >= 1.26;
#   2. /usr/local/go/bin/go (where Go's release archive installs), if it is >= 1.26;
#   3. $FLEETSCHED_GO_TOOLCHAIN (default below) through Go's own toolchain switch: any Go >= 1.21
#      on PATH (Debian 12's golang-go from bookworm-backports, which scripts/bootstrap.sh installs)
#      run with GOTOOLCHAIN=$FLEETSCHED_GO_TOOLCHAIN fetches the golang.org/toolchain module from
#      the Go module proxy into the per-user module cache once; later runs find it there.
# It returns non-zero, saying why, when none of these works. Only Debian's archive and the Go
# module proxy are ever reached.
FLEETSCHED_GO_TOOLCHAIN=${FLEETSCHED_GO_TOOLCHAIN:-go1.26.8}

# fleetsched_go_at_least GO MINOR: GO is Go 1.MINOR or later (its own version, never switching).
fleetsched_go_at_least() {
  local v minor
  v=$(cd / && GOTOOLCHAIN=local "$1" env GOVERSION 2>/dev/null) || return 1
  v=${v#go1.}
  minor=${v%%[!0-9]*}
  [[ -n $minor && $minor -ge $2 ]]
}

# fleetsched_go_switcher: prints a Go >= 1.21 (one that understands GOTOOLCHAIN), if any.
fleetsched_go_switcher() {
  local go
  for go in "$(command -v go 2>/dev/null)" /usr/lib/go-1.*/bin/go; do
    [[ -n $go && -x $go ]] && fleetsched_go_at_least "$go" 21 && { echo "$go"; return 0; }
  done
  return 1
}

fleetsched_go_env() {
  local go goroot
  go=$(command -v go 2>/dev/null) && fleetsched_go_at_least "$go" 26 && return 0
  if fleetsched_go_at_least /usr/local/go/bin/go 26; then
    export PATH="/usr/local/go/bin:$PATH"
    return 0
  fi
  if ! go=$(fleetsched_go_switcher); then
    echo "go-env: no Go >= 1.26, and no Go >= 1.21 to fetch $FLEETSCHED_GO_TOOLCHAIN with;" \
      "run scripts/bootstrap.sh" >&2
    return 1
  fi
  # From / so that no go.mod or go.work around asks for another toolchain.
  if ! goroot=$(cd / && GOTOOLCHAIN=$FLEETSCHED_GO_TOOLCHAIN "$go" env GOROOT) ||
    ! fleetsched_go_at_least "$goroot/bin/go" 26; then
    echo "go-env: $go could not fetch $FLEETSCHED_GO_TOOLCHAIN from the Go module proxy" \
      "($(cd / && GOTOOLCHAIN=local "$go" env GOPROXY 2>/dev/null))" >&2
    return 1
  fi
  export PATH="$goroot/bin:$PATH"
}
