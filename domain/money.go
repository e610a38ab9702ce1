package domain

import "math/big"

// Money arithmetic: exact rationals, rounded half up to cents once per line
// (docs/sections.md: never floats).

var hundred = big.NewRat(100, 1)

// moneyRat is the value of a Money the schema already checked.
func moneyRat(m Money) *big.Rat { return Decimal(m).Rat() }

// roundCents rounds half up (away from zero) to two decimals.
func roundCents(r *big.Rat) *big.Rat {
	scaled := new(big.Rat).Mul(r, hundred)
	num, den := scaled.Num(), scaled.Denom()
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	if twice := new(big.Int).Mul(new(big.Int).Abs(m), big.NewInt(2)); twice.Cmp(den) >= 0 {
		if num.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return new(big.Rat).SetFrac(q, big.NewInt(100))
}

// MoneyOf formats an amount with exactly two decimals.
func MoneyOf(r *big.Rat) Money { return Money(roundCents(r).FloatString(2)) }

// lineNet is quantity × unit price × (1 − discount/100), half up to cents.
func lineNet(quantity Decimal, unitPrice Money, discount *Decimal) *big.Rat {
	net := new(big.Rat).Mul(quantity.Rat(), moneyRat(unitPrice))
	if discount != nil {
		keep := new(big.Rat).Sub(big.NewRat(1, 1), new(big.Rat).Quo(discount.Rat(), hundred))
		net.Mul(net, keep)
	}
	return roundCents(net)
}

// sameMoney compares an amount as given with a computed one.
func sameMoney(given Money, want *big.Rat) bool { return moneyRat(given).Cmp(want) == 0 }
