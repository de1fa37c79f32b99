# tools/wheel/apt-mirror.sh — sourced by build-wheel.sh and test-wheel.sh:
# both ask the Debian archive through the mirror this machine's apt uses,
# so no host is written in the tree.
# The first "deb" source of this machine: "URI SUITE" (one-line or deb822 form).
apt_mirror() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk '$1 == "deb" { i = 2; if ($2 ~ /^\[/) while ($i !~ /\]$/) i++; if ($2 ~ /^\[/) i++;
                       print $i, $(i + 1); found = 1; exit } END { exit !found }' "$f" && return
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk 'tolower($1) == "types:" { deb = ($0 ~ /[ \t]deb([ \t]|$)/) }
         tolower($1) == "uris:" { u = $2 } tolower($1) == "suites:" { s = $2 }
         /^[ \t]*$/ { if (deb && u != "" && s != "") { print u, s; found = 1; exit } deb = 0; u = ""; s = "" }
         END { if (!found && deb && u != "" && s != "") { print u, s; found = 1 } exit !found }' "$f" && return
  done
}
