#!/usr/bin/env node
// `adm`: the ADAMANT console command line. Its commands arrive with the console service; until then it
// says so instead of pretending to work.
process.stderr.write('adm: the console command line is not available in this build yet (it arrives with the console service)\n');
process.exit(2);
