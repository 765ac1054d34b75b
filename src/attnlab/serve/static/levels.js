// The label levels of a translation run, named after its vocabulary: the model's own pieces
// first (what it reads: characters for a character-level run, subword pieces for BPE or
// unigram), then words; a word-level run's pieces are its words, so it offers one level.

const PIECES = { char: "characters", bpe: "subword pieces", unigram: "subword pieces" };

/** [{ value, name }] for the API's `level`, the default first. */
export function levelsOf(vocabulary) {
  const pieces = PIECES[vocabulary];
  return pieces ? [{ value: "piece", name: pieces }, { value: "word", name: "words" }]
    : [{ value: "word", name: "words" }];
}

/** The vocabulary of a run as /api/runs lists it ("bpe" when its config does not say). */
export function vocabularyOf(run) {
  return run?.config?.data?.vocab ?? "bpe";
}

/** Fill a fieldset with a radio per level (group `name`), `chosen` checked (default: the
 *  first), under the legend "Labels". */
export function fillLevels(fieldset, name, levels, chosen = levels[0].value) {
  const legend = Object.assign(document.createElement("legend"), { textContent: "Labels" });
  fieldset.replaceChildren(legend, ...levels.map(({ value, name: shown }) => {
    const labelNode = document.createElement("label");
    const radio = Object.assign(document.createElement("input"),
      { type: "radio", name, value, checked: value === chosen });
    labelNode.append(radio, ` ${shown}`);
    return labelNode;
  }));
}
