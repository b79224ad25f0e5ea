# embed-idl.awk - turn ipc/*.varlink into ipc/idl-text.c, the table
# idl_interfaces[] of ipc/idl.h.  Each file's name (without .varlink) is
# its interface name; its text is kept byte for byte as a C string.
# Usage: awk -f embed-idl.awk FILE.varlink... > idl-text.c

function close_entry() {
	if (open_entry)
		print "\t},"
	open_entry = 0
}

BEGIN {
	print "/*"
	print " * idl-text.c - GENERATED from ipc/NAME.varlink by ipc/embed-idl.awk;"
	print " * do not edit: edit the .varlink files."
	print " */"
	print "#include \"config.h\""
	print ""
	print "#include <stddef.h>"
	print ""
	print "#include \"ipc/idl.h\""
	print ""
	print "const struct idl_interface idl_interfaces[] = {"
}

FNR == 1 {
	close_entry()
	name = FILENAME
	sub(/^.*\//, "", name)
	sub(/\.varlink$/, "", name)
	print "\t{"
	print "\t\t\"" name "\","
	open_entry = 1
}

# Character by character: awks disagree on backslashes in gsub().
function c_escape(s,    out, i, c) {
	out = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "\\")
			out = out "\\\\"
		else if (c == "\"")
			out = out "\\\""
		else if (c == "\t")
			out = out "\\t"
		else if (c == "\r")
			out = out "\\r"
		else if (c == "?")
			out = out "\\?"	# no trigraphs
		else
			out = out c
	}
	return out
}

{
	print "\t\t\"" c_escape($0) "\\n\""
}

END {
	close_entry()
	print "\t{NULL, NULL},"
	print "};"
}
