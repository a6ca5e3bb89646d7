/**
 * The command lines of the programs the default rules let run without asking, as data, from the
 * `--help` of the versions in the sandbox image (Debian bookworm: coreutils 9.1, grep 3.8,
 * diffutils 3.8, sed 4.9, findutils 4.9, bash 5.2 builtins) plus file and tree.
 * Long options are written as one string: `name` a flag, `name=` takes a value, `name=?` takes
 * one only as `--name=value`. An option missing here makes the policy ask: add it with care, a
 * looser table allows more in every session started after the change.
 */
import type { LongKind, ProgramSpec } from './spec';

/** `"all block-size= color=?"` → `{ all: 'flag', 'block-size': 'value', color: 'optional' }`. */
export function longOptions(text: string): Record<string, LongKind> {
  const out: Record<string, LongKind> = {};
  for (const word of text.split(/\s+/)) {
    if (!word) continue;
    if (word.endsWith('=?')) out[word.slice(0, -2)] = 'optional';
    else if (word.endsWith('=')) out[word.slice(0, -1)] = 'value';
    else out[word] = 'flag';
  }
  return out;
}

const STD = ' help version';
const NAMES_FROM_FILE = 'reads the names of the files to read from a file the policy cannot see';

const grep: ProgramSpec = {
  valued: 'efmdDABC',
  flags: 'EFGPiywxzsvVbnHhoqaIrRLlcTZU',
  numeric: true,
  long: longOptions(
    'extended-regexp fixed-strings basic-regexp perl-regexp regexp= file= ignore-case no-ignore-case word-regexp ' +
      'line-regexp null-data no-messages invert-match max-count= byte-offset line-number line-buffered with-filename ' +
      'no-filename label= only-matching quiet silent binary-files= text directories= devices= recursive ' +
      'dereference-recursive include= exclude= exclude-from= exclude-dir= files-without-match files-with-matches count ' +
      'initial-tab null before-context= after-context= context= group-separator= no-group-separator color=? colour=? ' +
      'binary' + STD,
  ),
  code: ['e', 'regexp'],
  codeOperandUnless: ['e', 'regexp', 'f', 'file'],
};

const checksum: ProgramSpec = {
  flags: 'bctzw',
  long: longOptions('binary check tag text zero ignore-missing quiet status strict warn' + STD),
  refuse: { c: NAMES_FROM_FILE, check: NAMES_FROM_FILE },
};

const test: ProgramSpec = {
  free: true,
  // bash evaluates the subscript of `-v 'a[…]'` (and `-R`) arithmetically, which can run commands.
  refuseWords: { '-v': '`-v` may evaluate an array subscript', '-R': '`-R` may evaluate an array subscript' },
};

/** The programs of the default read-only rules, by name. */
export const PROGRAMS: Readonly<Record<string, ProgramSpec>> = {
  ls: {
    valued: 'ITw',
    flags: 'aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1',
    long: longOptions(
      'all almost-all author escape block-size= ignore-backups directory dired classify=? file-type format= full-time ' +
        'group-directories-first no-group human-readable si dereference-command-line ' +
        'dereference-command-line-symlink-to-dir hide= hyperlink=? indicator-style= inode ignore= kibibytes dereference ' +
        'numeric-uid-gid literal hide-control-chars show-control-chars quote-name quoting-style= reverse recursive size ' +
        'sort= time= time-style= tabsize= width= context zero color=?' + STD,
    ),
  },
  cat: { flags: 'AbeEnstTuv', long: longOptions('show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting' + STD) },
  head: { valued: 'cn', flags: 'qvz', numeric: true, long: longOptions('bytes= lines= quiet silent verbose zero-terminated' + STD) },
  tail: {
    valued: 'cns',
    flags: 'fFqvz',
    numeric: true,
    long: longOptions('bytes= follow=? lines= max-unchanged-stats= pid= quiet silent retry sleep-interval= verbose zero-terminated' + STD),
  },
  grep,
  egrep: grep,
  fgrep: grep,
  wc: {
    flags: 'cmlLw',
    long: longOptions('bytes chars lines files0-from= max-line-length words total=' + STD),
    refuse: { 'files0-from': NAMES_FROM_FILE },
  },
  sort: {
    valued: 'kotST',
    flags: 'bcCdfghiMmnrRsuVz',
    long: longOptions(
      'ignore-leading-blanks dictionary-order ignore-case general-numeric-sort ignore-nonprinting month-sort ' +
        'human-numeric-sort numeric-sort random-sort random-source= reverse sort= version-sort batch-size= check=? ' +
        'compress-program= debug files0-from= key= merge output= stable buffer-size= field-separator= ' +
        'temporary-directory= parallel= unique zero-terminated' + STD,
    ),
    refuse: {
      o: 'writes a file', output: 'writes a file',
      T: 'writes temporary files into a folder', 'temporary-directory': 'writes temporary files into a folder',
      'compress-program': 'runs a program', 'files0-from': NAMES_FROM_FILE,
    },
  },
  uniq: {
    valued: 'fsw',
    flags: 'cdDiuz',
    long: longOptions('count repeated all-repeated=? skip-fields= group=? ignore-case skip-chars= unique zero-terminated check-chars=' + STD),
    maxOperands: { count: 1, why: 'a second file operand is written' },
  },
  cut: {
    valued: 'bcdf',
    flags: 'nsz',
    long: longOptions('bytes= characters= delimiter= fields= complement only-delimited output-delimiter= zero-terminated' + STD),
  },
  tr: { flags: 'cCdst', long: longOptions('complement delete squeeze-repeats truncate-set1' + STD) },
  echo: { free: true },
  printf: { valued: 'v', refuse: { v: 'assigns a variable' } },
  pwd: { flags: 'LP' },
  stat: { valued: 'c', flags: 'Lft', long: longOptions('dereference file-system cached= format= printf= terse' + STD) },
  file: {
    valued: 'eFfmP',
    flags: 'bcCdEhiIkLlNnprsSvzZ0',
    long: longOptions(
      'apple brief checking-printout compile debug exclude= exclude-quiet= extension files-from= separator= keep-going ' +
        'list dereference magic-file= mime mime-type mime-encoding no-dereference no-buffer no-pad no-sandbox print0 ' +
        'parameter= preserve-date raw special-files uncompress uncompress-noreport' + STD,
    ),
    refuse: { C: 'writes a compiled magic file', compile: 'writes a compiled magic file', f: NAMES_FROM_FILE, 'files-from': NAMES_FROM_FILE },
  },
  du: {
    valued: 'BdtX',
    flags: '0abcDHhkLlmPSsx',
    long: longOptions(
      'null all apparent-size block-size= bytes total dereference-args max-depth= files0-from= human-readable inodes ' +
        'dereference count-links no-dereference separate-dirs si summarize threshold= time=? time-style= exclude-from= ' +
        'exclude= one-file-system' + STD,
    ),
    refuse: { 'files0-from': NAMES_FROM_FILE },
  },
  tree: {
    valued: 'LPIoHT',
    flags: 'adlfxRqNQpugshDFvtcUriASnCXJ',
    long: longOptions(
      'gitignore ignore-case matchdirs metafirst prune info infofile= noreport charset= filelimit= timefmt= si du inodes ' +
        'device dirsfirst filesfirst sort= nolinks hintro= houtro= fromfile fromtabfile fflinks' + STD,
    ),
    refuse: {
      o: 'writes the listing to a file', R: 'writes 00Tree.html files', fromfile: 'reads a listing from a file',
      fromtabfile: 'reads a listing from a file', hintro: 'reads a file', houtro: 'reads a file', infofile: 'reads a file',
    },
  },
  diff: {
    valued: 'CUWFxXSDI',
    flags: 'qscuenyptTrNiEZbwBadlv',
    long: longOptions(
      'normal brief report-identical-files context=? unified=? ed rcs side-by-side width= left-column ' +
        'suppress-common-lines show-c-function show-function-line= label= expand-tabs initial-tab tabsize= ' +
        'suppress-blank-empty paginate recursive no-dereference new-file unidirectional-new-file ignore-file-name-case ' +
        'no-ignore-file-name-case exclude= exclude-from= starting-file= from-file= to-file= ignore-case ' +
        'ignore-tab-expansion ignore-trailing-space ignore-space-change ignore-all-space ignore-blank-lines ' +
        'ignore-matching-lines= text strip-trailing-cr ifdef= old-group-format= new-group-format= ' +
        'unchanged-group-format= changed-group-format= line-format= old-line-format= new-line-format= ' +
        'unchanged-line-format= minimal horizon-lines= speed-large-files color=? palette=' + STD,
    ),
    refuse: { l: 'passes the output through `pr`, a program the policy does not see', paginate: 'passes the output through `pr`, a program the policy does not see' },
  },
  cmp: { valued: 'in', flags: 'blsv', long: longOptions('print-bytes ignore-initial= verbose bytes= quiet silent' + STD) },
  comm: { flags: '123z', long: longOptions('check-order nocheck-order output-delimiter= total zero-terminated' + STD) },
  basename: { valued: 's', flags: 'az', long: longOptions('multiple suffix= zero' + STD) },
  dirname: { flags: 'z', long: longOptions('zero' + STD) },
  realpath: {
    flags: 'emLPqsz',
    long: longOptions('canonicalize-existing canonicalize-missing logical physical quiet relative-to= relative-base= strip no-symlinks zero' + STD),
  },
  which: { flags: 'as' },
  true: { free: true },
  false: { free: true },
  test,
  '[': test,
  nl: {
    valued: 'bdfhilnsvw',
    flags: 'p',
    long: longOptions(
      'body-numbering= section-delimiter= footer-numbering= header-numbering= line-increment= join-blank-lines= ' +
        'number-format= no-renumber number-separator= starting-line-number= number-width=' + STD,
    ),
  },
  tac: { valued: 's', flags: 'br', long: longOptions('before regex separator=' + STD) },
  rev: { flags: 'hV', long: longOptions(STD) },
  paste: { valued: 'd', flags: 'sz', long: longOptions('delimiters= serial zero-terminated' + STD) },
  seq: { valued: 'fs', flags: 'w', numeric: true, long: longOptions('format= separator= equal-width' + STD) },
  md5sum: checksum,
  sha256sum: checksum,
};
