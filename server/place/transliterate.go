package place

import (
	"strings"

	"golang.org/x/text/unicode/norm"
)

// Bengali letters in the common (not ISO 15919) romanisation that place
// names are written in: চ ch, শ/ষ sh, ড় r, the inherent vowel o.
var (
	bnConsonants = map[rune]string{
		'ক': "k", 'খ': "kh", 'গ': "g", 'ঘ': "gh", 'ঙ': "ng", 'চ': "ch", 'ছ': "chh", 'জ': "j", 'ঝ': "jh",
		'ঞ': "n", 'ট': "t", 'ঠ': "th", 'ড': "d", 'ঢ': "dh", 'ণ': "n", 'ত': "t", 'থ': "th", 'দ': "d",
		'ধ': "dh", 'ন': "n", 'প': "p", 'ফ': "ph", 'ব': "b", 'ভ': "bh", 'ম': "m", 'য': "j", 'র': "r",
		'ল': "l", 'শ': "sh", 'ষ': "sh", 'স': "s", 'হ': "h",
	}
	// A consonant with a nukta (NFD spelling of ড় ঢ় য়).
	bnNukta  = map[rune]string{'ড': "r", 'ঢ': "rh", 'য': "y"}
	bnVowels = map[rune]string{
		'অ': "o", 'আ': "a", 'ই': "i", 'ঈ': "i", 'উ': "u", 'ঊ': "u", 'ঋ': "ri", 'এ': "e", 'ঐ': "oi",
		'ও': "o", 'ঔ': "ou",
	}
	bnSigns = map[rune]string{
		'া': "a", 'ি': "i", 'ী': "i", 'ু': "u", 'ূ': "u", 'ৃ': "ri", 'ে': "e", 'ৈ': "oi", 'ো': "o",
		'ৌ': "ou",
	}
	bnOther = map[rune]string{
		'ং': "ng", 'ঃ': "h", 'ঁ': "", 'ৎ': "t", '০': "0", '১': "1", '২': "2", '৩': "3", '৪': "4",
		'৫': "5", '৬': "6", '৭': "7", '৮': "8", '৯': "9",
	}
)

const (
	bnHasanta = '্'
	bnNuktaCh = '়'
)

// Transliterate writes Bengali script in Latin letters the way place names
// are commonly romanised ("চট্টগ্রাম" → "chottogram", "ঢাকা" → "dhaka"); other
// characters pass through. A consonant carries the inherent vowel o unless
// a vowel sign or hasanta follows or it ends the word. Good enough for
// Skeleton to find a place; not a scholarly transliteration. The way back,
// Latin to Bengali, is the gazetteer's: a recognised place carries its
// Bengali name (docs/decisions/0110).
func Transliterate(s string) string {
	rs := []rune(norm.NFD.String(s))
	var b strings.Builder
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		c, isCons := bnConsonants[r]
		if !isCons {
			switch {
			case bnVowels[r] != "":
				b.WriteString(bnVowels[r])
			case bnSigns[r] != "":
				b.WriteString(bnSigns[r])
			case r == bnHasanta || r == bnNuktaCh:
			default:
				if o, ok := bnOther[r]; ok {
					b.WriteString(o)
				} else {
					b.WriteRune(r)
				}
			}
			continue
		}
		if i+1 < len(rs) && rs[i+1] == bnNuktaCh {
			if n, ok := bnNukta[r]; ok {
				c = n
			}
			i++
		}
		b.WriteString(c)
		next := rune(0)
		if i+1 < len(rs) {
			next = rs[i+1]
		}
		_, nextCons := bnConsonants[next]
		// Between a vowel and a consonant with a vowel sign the inherent
		// vowel is not spoken: খুলনা is khulna.
		afterVowel := i > 0 && (bnSigns[rs[i-1]] != "" || bnVowels[rs[i-1]] != "")
		beforeSign := nextCons && i+2 < len(rs) && bnSigns[rs[i+2]] != ""
		if (nextCons || bnVowels[next] != "" || next == 'ং' || next == 'ঃ' || next == 'ৎ') && !(afterVowel && beforeSign) {
			// The inherent vowel; none at the end of a word, nor before a
			// vowel sign or hasanta.
			b.WriteString("o")
		}
	}
	return b.String()
}
