package waitingroom

// CachedRooms is how many rooms, and how many "no room" answers, s caches.
func CachedRooms(s *Service) (rooms, noRoom int) { return s.rooms.rooms.Len(), s.rooms.noRoom.Len() }
