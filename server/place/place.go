// Package place is the gazetteer of Bangladesh: every district and
// the major intercity bus stops, each with a canonical id, its official
// English name, its former and common spellings and its Bengali name, read
// from the hand-written places.txt (its header names the public sources).
// It also owns the folding of place names that trip search and the catalog
// share: case, diacritics, apostrophes, joined or split words, loose
// transliteration and Bengali script (docs/decisions/0110).
package place

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

//go:embed places.txt
var placesTxt string

// Place is one entry of the gazetteer.
type Place struct {
	// ID is the canonical id a show stores next to its display names.
	ID string
	// Name is the official English name ("Chattogram").
	Name string
	// Bengali is the name in Bengali script ("চট্টগ্রাম").
	Bengali string
	// Kind is "district" or "stop".
	Kind string
	// District is the id of the district the place lies in (its own for a
	// district).
	District string
	// Aliases are the former and common spellings ("Chittagong", "Ctg").
	Aliases []string
}

// Token is the place's id as one search word ("coxs-bazar" → "coxsbazar"):
// the form both trip indexes store and a recognised place is searched by.
func (p Place) Token() string { return strings.ReplaceAll(p.ID, "-", "") }

// Gazetteer finds places by any of their spellings.
type Gazetteer struct {
	places []Place
	// byKey maps the skeleton of every Latin spelling, and the folded
	// Bengali name, to the place and the listed spelling.
	byKey map[string]entry
	// exact maps every listed spelling, folded without spaces, to the
	// place and the spelling, so "Barisal" is told from "Barishal" though
	// they share a skeleton.
	exact map[string]entry
}

type entry struct {
	i        int
	spelling string
}

// Default is the gazetteer of places.txt, parsed on first use.
var Default = sync.OnceValue(func() *Gazetteer {
	g, err := Parse(placesTxt)
	if err != nil {
		panic(err) // places.txt is part of the binary; TestGazetteerParses guards it
	}
	return g
})

// Parse reads a gazetteer in the format of places.txt. Two places sharing
// a spelling (once folded) is an error: a spelling must name one place.
func Parse(text string) (*Gazetteer, error) {
	g := &Gazetteer{byKey: map[string]entry{}, exact: map[string]entry{}}
	ids := map[string]bool{}
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "|")
		if len(f) != 6 {
			return nil, fmt.Errorf("places line %d: %d fields, want 6", n+1, len(f))
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		p := Place{ID: f[0], Name: f[1], Bengali: norm.NFC.String(f[2]), Kind: f[3], District: f[4]}
		for _, a := range strings.Split(f[5], ",") {
			if a = strings.TrimSpace(a); a != "" {
				p.Aliases = append(p.Aliases, a)
			}
		}
		if p.ID == "" || p.Name == "" || p.Bengali == "" || ids[p.ID] {
			return nil, fmt.Errorf("places line %d: empty or repeated id, name or Bengali name", n+1)
		}
		if p.Kind != "district" && p.Kind != "stop" {
			return nil, fmt.Errorf("places line %d: kind %q", n+1, p.Kind)
		}
		ids[p.ID] = true
		i := len(g.places)
		g.places = append(g.places, p)
		for _, s := range append([]string{p.ID, p.Name, p.Bengali}, p.Aliases...) {
			g.exact[strings.ReplaceAll(Fold(s), " ", "")] = entry{i, s}
			k := lookupKey(s)
			if e, ok := g.byKey[k]; ok {
				if e.i != i {
					return nil, fmt.Errorf("places line %d: %q also names %s", n+1, s, g.places[e.i].ID)
				}
				continue // the first listed spelling of a skeleton stands for it
			}
			g.byKey[k] = entry{i, s}
		}
	}
	for _, p := range g.places {
		if !ids[p.District] {
			return nil, fmt.Errorf("place %s: unknown district %q", p.ID, p.District)
		}
	}
	return g, nil
}

// Places lists every place in the file's order.
func (g *Gazetteer) Places() []Place { return g.places }

// Lookup finds the place a spelling names: any case, with or without
// diacritics, apostrophes, spaces or hyphens, a loose transliteration of
// a listed spelling, or Bengali script.
func (g *Gazetteer) Lookup(s string) (Place, bool) {
	p, _, ok := g.Match(s)
	return p, ok
}

// Bengali is the Bengali name of the place s names in the default
// gazetteer, for a Bengali UI; "" when it names none (free text stays as
// typed).
func Bengali(s string) string {
	if s == "" {
		return ""
	}
	p, ok := Default().Lookup(s)
	if !ok {
		return ""
	}
	return p.Bengali
}

// Match is Lookup that also tells which listed spelling s stands for
// ("chittagong" → "Chittagong", "chottogram" → "Chottogram").
func (g *Gazetteer) Match(s string) (p Place, spelling string, ok bool) {
	k := lookupKey(s)
	if k == "" {
		return Place{}, "", false
	}
	e, ok := g.exact[strings.ReplaceAll(Fold(s), " ", "")]
	if !ok {
		e, ok = g.byKey[k]
	}
	if !ok && IsBengali(k) {
		// A Bengali spelling other than the listed one: through its
		// transliteration.
		e, ok = g.byKey[Skeleton(Transliterate(k))]
	}
	if !ok {
		return Place{}, "", false
	}
	return g.places[e.i], e.spelling, true
}

// Word is one word of a scanned text, or the words that name a place.
type Word struct {
	// Text is the folded word; for a place, the folded words as typed.
	Text string
	// Place is the place the words name; nil for a plain word.
	Place *Place
	// Spelling is the listed spelling the words stand for.
	Spelling string
}

// Scan splits text into folded words and finds the places among them,
// the longest spelling first (up to four words), so "cox s bazar", "coxs
// bazar" and "coxsbazar" each name one place.
func (g *Gazetteer) Scan(text string) []Word {
	words := strings.Fields(Fold(text))
	var out []Word
	for i := 0; i < len(words); {
		found := false
		for j := min(len(words), i+4); j > i; j-- {
			if p, spelling, ok := g.Match(strings.Join(words[i:j], "")); ok {
				out = append(out, Word{Text: strings.Join(words[i:j], " "), Place: &p, Spelling: spelling})
				i, found = j, true
				break
			}
		}
		if !found {
			out = append(out, Word{Text: words[i]})
			i++
		}
	}
	return out
}

// Label names p for a buyer who typed spelling: the official name, and
// the spelling in brackets when it is a former or common Latin one
// ("Chattogram (Chittagong)").
func (p Place) Label(spelling string) string {
	for _, a := range p.Aliases {
		if a == spelling && !IsBengali(a) {
			return p.Name + " (" + spelling + ")"
		}
	}
	return p.Name
}

// lookupKey is the folded Bengali spelling without spaces, or the skeleton
// of a Latin one.
func lookupKey(s string) string {
	f := strings.ReplaceAll(Fold(s), " ", "")
	if IsBengali(f) {
		return f
	}
	return Skeleton(f)
}

// IsBengali says whether s has a letter in Bengali script.
func IsBengali(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Bengali, r) {
			return true
		}
	}
	return false
}

// Fold is s as search compares it: lower case, Latin diacritics and
// apostrophes removed ("Cox’s" → "coxs"), zero-width joiners removed, other
// punctuation a space, spaces collapsed, Bengali in NFC.
func Fold(s string) string {
	var b strings.Builder
	space := true
	for _, r := range norm.NFD.String(s) {
		switch {
		case r >= 0x300 && r <= 0x36f: // combining diacritics of Latin letters
		case r == '\'' || r == '’' || r == '‘' || r == '`' || r == 'ʼ' || r == '´':
		case r == 0x200c || r == 0x200d: // ZWNJ, ZWJ: typing artefacts in Bengali
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r):
			b.WriteRune(unicode.ToLower(r))
			space = false
		default:
			if !space {
				b.WriteByte(' ')
				space = true
			}
		}
	}
	return norm.NFC.String(strings.TrimSpace(b.String()))
}

// skeletonSteps turn a Latin spelling into its skeleton, in order: the
// digraphs of Bengali transliteration to one letter, letters that spell one
// sound to one, then vowels to two classes.
var skeletonSteps = []*strings.Replacer{
	strings.NewReplacer("chh", "C", "ch", "C", "sh", "s", "kh", "k", "gh", "g", "th", "t", "dh", "d",
		"ph", "f", "bh", "b", "jh", "j", "rh", "r", "ng", "N"),
	strings.NewReplacer("c", "k", "q", "k", "x", "ks", "z", "j", "v", "b", "w", ""),
	strings.NewReplacer("a", "a", "o", "a", "u", "a", "e", "i", "y", "i", "C", "c", "N", "ng"),
}

// Skeleton is a Latin spelling reduced to what loose transliterations of
// one Bengali name share: "Chottogram" and "Chattogram", "Borishal" and
// "Barisal", "Coxsbazar" and "Cox Bazar", "Kallyanpur" and "Kalyanpur" have
// one skeleton each. Letters other than a–z and digits are dropped.
func Skeleton(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	out := b.String()
	for i, r := range skeletonSteps {
		out = r.Replace(out)
		if i == 0 {
			out = dropAspiration(out)
		}
	}
	// A doubled letter is one: "Kallyanpur", "Chittagong", "Cumilla".
	var d strings.Builder
	var last rune
	for _, r := range out {
		if r != last {
			d.WriteRune(r)
		}
		last = r
	}
	return d.String()
}

// dropAspiration drops an h after a consonant ("Sylhet" and "Sylet"); an h
// after a vowel is a letter of its own ("Meherpur" is not "Mirpur").
func dropAspiration(s string) string {
	var b strings.Builder
	prev := byte(0)
	for i := 0; i < len(s); i++ {
		if s[i] == 'h' && prev != 0 && !strings.ContainsRune("aeiouyw", rune(prev)) {
			continue
		}
		b.WriteByte(s[i])
		prev = s[i]
	}
	return b.String()
}
